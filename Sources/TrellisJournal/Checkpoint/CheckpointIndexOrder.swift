import TrellisCore
import TrellisGraph

/// The payload of an index-order chunk (record type 5, format version 3): where each object of one entity stands in
/// one of its indexes, so that loading builds the index by placing each key, with no sort. journal-format.md
/// ("Index-order chunk payload") gives every byte.
///
/// Only an index whose order differs from serial order gets one: a sequential id's index is already in order, and the
/// loader sees that as it reads the keys.
enum CheckpointIndexOrder {
    /// The places of index `index` of `table`: for the i-th live object in serial order, its position in the index.
    /// Nil when every object stands in serial order (nothing to store), and when the index does not hold exactly the
    /// live objects (which commits never leave; should it happen, the checkpoint stores no order and loading builds
    /// the index from the rows, rather than compaction stopping).
    static func places(_ table: EntityTable, index: Int) -> [Int64]? {
        // The rank of a serial among the live ones: the live objects of the leaves before its own, plus those of its
        // leaf below it.
        var keys: [UInt64] = []
        var bases: [Int] = []
        var presents: [UInt64] = []
        var total = 0
        for (key, leaf) in table.leaves {
            keys.append(key)
            bases.append(total)
            presents.append(leaf.present)
            total += leaf.present.nonzeroBitCount
        }
        guard table.indexes[index].count == total else { return nil }
        // Leaves with no gap between them (a store without deletions): a leaf's position is its key's distance from
        // the first, found without a search.
        let first = keys.first ?? 0
        let dense = keys.last.map { $0 - first + 1 == UInt64(keys.count) } ?? false
        var places = [Int64](repeating: -1, count: total)
        var position: Int64 = 0
        var inSerialOrder = true
        var consistent = true
        func place(_ serial: UInt64) {
            let key = serial >> Leaf.shift
            let bit: UInt64 = 1 << (serial & Leaf.mask)
            var low = 0
            if dense {
                low = key >= first && key - first < UInt64(keys.count) ? Int(key - first) : keys.count
            } else {
                var high = keys.count
                while low < high {
                    let middle = (low + high) / 2
                    if keys[middle] < key { low = middle + 1 } else { high = middle }
                }
            }
            guard low < keys.count, keys[low] == key, presents[low] & bit != 0 else {
                consistent = false
                return
            }
            let rank = bases[low] + (presents[low] & (bit - 1)).nonzeroBitCount
            if rank != Int(position) { inSerialOrder = false }
            places[rank] = position
            position += 1
        }
        switch table.indexes[index] {
        case .scalar(let tree, _): tree.forEach { entry, _ in place(entry.serial) }
        case .general(let tree): tree.forEach { entry, _ in place(entry.serial) }
        }
        // Every object placed once: an entry naming an object twice would leave another's place unset.
        guard consistent, !inSerialOrder, !places.contains(-1) else { return nil }
        return places
    }

    /// Encodes the places of index `index` of entity `entity`.
    static func encode(entity: Int, index: Int, places: [Int64], level: Int32) -> [UInt8] {
        var w = ByteWriter(capacity: places.count * 3 + 32)
        w.varint(entity)
        w.varint(index)
        w.varint(places.count)
        var block = ByteWriter(capacity: places.count * 3 + 16)
        block.ints(places)
        w.section(block.bytes, level: level, strategies: [.standard])
        return w.bytes
    }

    /// The entity and index a payload is for, and a reader positioned at its count.
    struct Header {
        var entity: Int
        var index: Int
        var reader: ByteReader
    }

    /// Reads which entity and index a payload orders; `places(_:count:)` reads the rest.
    static func header(_ payload: [UInt8], schema: Schema, context: String) throws -> Header {
        var r = ByteReader(payload, context: context)
        let entity = try r.int(limit: schema.layouts.count - 1)
        let indexes = schema.layouts[entity].indexes.count
        guard indexes > 0 else { throw r.failure("an index order for \(schema.layouts[entity].name), which has none") }
        let index = try r.int(limit: indexes - 1)
        return Header(entity: entity, index: index, reader: r)
    }

    /// Reads the places of an entity of `count` objects: exactly `count` of them, each in `0 ..< count` (whether
    /// they are a permutation, and whether it orders the keys, is the loader's to check).
    static func places(_ header: Header, count: Int) throws -> [Int64] {
        var r = header.reader
        let n = try r.varint()
        guard n == UInt64(count) else { throw r.failure("an index order of \(n) places for \(count) objects") }
        var section = try r.sectionReader()
        let places = try section.ints(count: count)
        try section.expectEnd()
        guard r.isAtEnd else { throw r.failure("trailing bytes") }
        for p in places where p < 0 || p >= Int64(count) {
            throw r.failure("place \(p) of an index of \(count) entries")
        }
        return places
    }
}

import TrellisCore
import TrellisGraph

/// The payload of an index-order chunk (record type 5, format version 3): where each object of one entity stands in
/// one of its indexes, so that loading builds the index by placing each key, with no sort. journal-format.md
/// ("Index-order chunk payload") gives every byte.
///
/// Only an index whose order differs from serial order gets one: a sequential id's index is already in order, and the
/// loader sees that as it reads the keys.
enum CheckpointIndexOrder {
    /// The place of each live object in index `index`'s order, by serial rank (see `EntityTable.indexPlaces`); nil
    /// when the objects stand in serial order or the index does not hold exactly the live objects.
    static func places(_ table: EntityTable, index: Int) -> [Int64]? {
        table.indexPlaces(index)
    }

    /// Encodes the places of index `index` of entity `entity`.
    static func encode(entity: Int, index: Int, places: [Int64], level: Int32) -> [UInt8] {
        let block = ByteWriter.bytes(estimate: places.count * 3 + 16) { $0.ints(places) }
        return ByteWriter.bytes(estimate: places.count * 3 + 32) { w in
            w.varint(entity)
            w.varint(index)
            w.varint(places.count)
            w.section(block, level: level, strategies: [.standard])
        }
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
        guard !schema.layouts[entity].indexes[index].isElements else {
            throw r.failure("an index order for an index of collection elements, which has none")
        }
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

import CTrellisHints
import Foundation
import TrellisCore

/// A live object read in place from its leaf: attribute reads cost an array access, no lookup.
///
/// ```swift
/// for row in snapshot.rows(entity: item) { total += row.int(n1) ?? 0 }
/// ```
///
/// Reads take keys of the row's own entity and do not check it (that would cost every read): a key of another entity
/// reads another column or traps.
public struct Row: Sendable {
    // The leaf's two arrays and the ID: four words, so a row is returned in registers. A row of six (the whole leaf,
    // its index and the ID) was returned through memory, where the caller dropped each array through its type's value
    // witnesses.
    @usableFromInline let columns: [Column]
    /// The leaf's link columns; nil for an entity without relationships, so that making and dropping its row does
    /// not retain and release the shared empty array (each an out-of-line call to the runtime's slow path).
    @usableFromInline let links: [LinkColumn]?
    /// The object's ID.
    public let id: ObjectID

    /// The row's index in its leaf: the low bits of its serial.
    @inlinable var index: Int { Int(truncatingIfNeeded: id.serial) & (Leaf.width - 1) }

    @inlinable init(leaf: Leaf, id: ObjectID) { self.init(columns: leaf.columns, links: leaf.links, id: id) }

    /// A row of the leaf at `leaf`, holding its column array, and its link array only when it has links.
    @inline(__always) init(at leaf: UnsafePointer<Leaf>, id: ObjectID) {
        columns = leaf.pointee.columns
        links = leaf.pointee.links.isEmpty ? nil : leaf.pointee.links
        self.id = id
    }

    @inlinable init(columns: [Column], links: [LinkColumn], id: ObjectID) {
        self.columns = columns
        self.links = links.isEmpty ? nil : links
        self.id = id
    }

    /// The value of an attribute of this object's entity.
    /// - Complexity: O(1).
    public func value(_ attribute: AttributeKey) -> Value { columns[attribute.index].value(index) }
    package func value(at attribute: Int) -> Value { columns[attribute].value(index) }

    /// Calls `body` with the attribute's column, in place, and this row's index in it, when the column is of `kind`
    /// and the row's value is not null. The typed reads are inlined into the caller's loop through it: binding
    /// `columns[i]` to a local would copy the column and retain its four arrays on every read.
    @inlinable @inline(__always)
    func read<R>(_ attribute: AttributeKey, _ kind: Column.Kind, _ body: (UnsafePointer<Column>, Int) -> R) -> R? {
        let i = attribute.index
        let r = index
        return columns.withUnsafeBufferPointer { columns in
            precondition(UInt(bitPattern: i) < UInt(columns.count), "an attribute of another entity")
            let column = columns.baseAddress! + i
            guard column.pointee.kind == kind, column.pointee.nulls & (1 << UInt64(r)) == 0 else { return nil }
            return body(column, r)
        }
    }

    /// An integer attribute's value, read without building a `Value`; nil when null or not an integer attribute.
    /// - Complexity: O(1).
    @inlinable @inline(__always) public func int(_ attribute: AttributeKey) -> Int64? {
        read(attribute, .int) { $0.pointee.int(at: $1) }
    }

    /// A `Double` (or `Float`) attribute's value, read in place; nil when null or not such an attribute.
    /// - Complexity: O(1).
    @inlinable @inline(__always) public func double(_ attribute: AttributeKey) -> Double? {
        read(attribute, .double) { $0.pointee.doubles[$1] }
    }

    /// A Boolean attribute's value, read in place; nil when null or not a Boolean attribute.
    /// - Complexity: O(1).
    @inlinable @inline(__always) public func bool(_ attribute: AttributeKey) -> Bool? {
        read(attribute, .bool) { $0.pointee.bits & (1 << UInt64($1)) != 0 }
    }

    /// A string attribute's value, read in place; nil when null or not a string attribute.
    /// - Complexity: O(1) plus the string's copy.
    @inlinable @inline(__always) public func string(_ attribute: AttributeKey) -> String? {
        // The bytes' address is found inside the arrays' closure and the string made after it, so no array is
        // retained across the string's initializer (an opaque call). The row's column list holds the bytes.
        let i = attribute.index
        let r = index
        let (start, count) = columns.withUnsafeBufferPointer { columns -> (UnsafePointer<UInt8>?, Int) in
            precondition(UInt(bitPattern: i) < UInt(columns.count), "an attribute of another entity")
            guard columns[i].kind == .string, columns[i].nulls & (1 << UInt64(r)) == 0 else { return (nil, -1) }
            return PackedStrings.utf8(at: (columns.baseAddress! + i).pointer(to: \.strings)!, r)
        }
        if count < 0 { return nil }
        guard let start else { return "" }
        // The column list is held to the end of the read: inlined, the row's last use would otherwise be the closure.
        return withExtendedLifetime(columns) {
            String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
        }
    }

    /// A date attribute's value, read without building a `Value`; nil when null or not a date attribute.
    /// - Complexity: O(1).
    @inlinable @inline(__always) public func date(_ attribute: AttributeKey) -> Date? {
        read(attribute, .date) { Date(timeIntervalSinceReferenceDate: $0.pointee.doubles[$1]) }
    }

    /// All attribute values, in schema order.
    /// - Complexity: O(a) for a attributes.
    public var values: [Value] { columns.map { $0.value(index) } }

    /// The serial numbers of a relationship's targets, in ascending order (the targets' entity is the relationship's
    /// target entity).
    /// - Complexity: O(k) for k targets.
    public func targetSerials(_ relationship: RelationshipKey) -> [UInt64] {
        Leaf.targets(in: links ?? [], index, relationship.index)
    }
}

/// The live objects of one entity in ascending serial order, walking leaves directly.
public struct RowSequence: Sequence, Sendable {
    @usableFromInline let entity: UInt32
    @usableFromInline let leaves: SerialTrie<Leaf>

    @usableFromInline init(entity: UInt32, leaves: SerialTrie<Leaf>) {
        self.entity = entity
        self.leaves = leaves
    }

    /// Walks the rows of one entity, leaf by leaf.
    public struct Iterator: IteratorProtocol {
        @usableFromInline var leafIterator: SerialTrie<Leaf>.Iterator
        @usableFromInline let entity: UInt32
        // The current leaf's key and the two arrays a row takes.
        @usableFromInline var key: UInt64 = 0
        @usableFromInline var columns: [Column] = []
        @usableFromInline var links: [LinkColumn] = []
        @usableFromInline var remaining: UInt64 = 0

        @usableFromInline init(leafIterator: SerialTrie<Leaf>.Iterator, entity: UInt32) {
            self.leafIterator = leafIterator
            self.entity = entity
        }

        /// The next live object, or nil at the end.
        @inlinable public mutating func next() -> Row? {
            while true {
                if remaining != 0 {
                    let r = remaining.trailingZeroBitCount
                    remaining &= remaining - 1
                    let serial = key << Leaf.shift | UInt64(r)
                    return Row(columns: columns, links: links, id: ObjectID(entity: entity, serial: serial))
                }
                guard let next = nextLeaf() else { return nil }
                key = next.key
                columns = next.value.columns
                links = next.value.links
                remaining = next.value.present
            }
        }

        /// The next leaf. Not inlined: compiled here, where the trie's iterator is specialized for `Leaf`; called
        /// from another module, its generic entry point looked up type metadata on every call.
        @usableFromInline mutating func nextLeaf() -> (key: UInt64, value: Leaf)? {
            leafIterator.next()
        }
    }

    /// An iterator from the lowest serial.
    @inlinable public func makeIterator() -> Iterator {
        Iterator(leafIterator: leaves.makeIterator(), entity: entity)
    }
}

/// The objects an index range selected (`Snapshot.rows(_:from:inclusive:to:inclusive:reverse:limit:)`), in index
/// order; each row is found in its leaf as the iteration reaches it.
public struct IndexRowSequence: Sequence, Sendable {
    let entity: UInt32
    let serials: [UInt64]
    let leaves: SerialTrie<Leaf>
    /// How many attribute columns each of the entity's leaves holds.
    let columnCount: Int

    init(entity: UInt32, serials: [UInt64], leaves: SerialTrie<Leaf>, columnCount: Int) {
        self.entity = entity
        self.serials = serials
        self.leaves = leaves
        self.columnCount = columnCount
    }

    /// The number of objects.
    /// - Complexity: O(1).
    public var count: Int { serials.count }
    /// The number of objects, as `count`.
    public var underestimatedCount: Int { serials.count }

    /// Walks the selected rows in index order.
    public struct Iterator: IteratorProtocol {
        let entity: UInt32
        let serials: [UInt64]
        let leaves: SerialTrie<Leaf>
        var position = 0

        /// The next row, or nil at the end.
        public mutating func next() -> Row? {
            guard position < serials.count else { return nil }
            let serial = serials[position]
            position += 1
            let (l, r) = EntityTable.split(serial)
            // An index holds live objects only, so `count` is exact and the standard library may rely on it.
            guard let leaf = leaves.value(forKey: l), leaf.contains(r) else {
                preconditionFailure("an index entry without a live object")
            }
            return Row(leaf: leaf, id: ObjectID(entity: entity, serial: serial))
        }
    }

    /// An iterator from the first selected object.
    public func makeIterator() -> Iterator { Iterator(entity: entity, serials: serials, leaves: leaves) }

    /// Calls `body` with each selected row in index order, as `for row in rows` does, with the rows lent rather than
    /// made: a row the iterator returns holds its leaf's arrays (two retains and two releases, atomic, on memory the
    /// index order visits at random), while the row `body` gets is read where its leaf is. A copy `body` keeps is an
    /// ordinary row. Rows of the entity's newest leaf, which the trie holds beside its nodes, are made as the iterator
    /// makes them; and the lending needs this method called on the sequence itself (generic `Sequence` code and
    /// `lazy` call the standard library's `forEach`, which iterates). The rows' leaves are looked up a few at a time
    /// before `body` reads the rows, so that those lookups' cache misses overlap.
    ///
    /// ```swift
    /// snapshot.rows(byScore, from: [.double(10)], to: [.double(20)], inclusive: false).forEach { row in
    ///     total += row.double(score) ?? 0
    /// }
    /// ```
    /// - Complexity: O(k) for k rows, each a few node hops.
    public func forEach(_ body: (Row) throws -> Void) rethrows { try forEach(reading: [], body) }

    /// `forEach(_:)` for a closure that reads only `attributes` (as Core Data's `propertiesToFetch` names them): the
    /// rows and their order are the same, and the values of those attributes are brought into the processor's caches
    /// a batch of rows ahead of `body`, so that reading rows scattered over a large store waits far less for memory.
    /// Attributes of integer, floating-point and date types are brought in; others are read as `forEach(_:)` reads
    /// them. Keys of another entity, and attributes `body` then does not read, change nothing but the time.
    ///
    /// ```swift
    /// snapshot.rows(byScore, from: [.double(10)], to: [.double(20)]).forEach(reading: [score, n1]) { row in
    ///     total += (row.double(score) ?? 0) + Double(row.int(n1) ?? 0)
    /// }
    /// ```
    /// - Complexity: O(k) for k rows, as `forEach(_:)`.
    public func forEach(reading attributes: [AttributeKey], _ body: (Row) throws -> Void) rethrows {
        guard let root = leaves.root else {
            for row in self { try body(row) }
            return
        }
        let tailKey = leaves.tail?.key
        let height = leaves.height
        let batch = Self.batch
        // Columns the entity has: every leaf of it holds them all, so a hint's column is always there.
        let columns = ArrayStorageHint.holds ? attributes.map(\.index).filter { $0 < columnCount } : []
        try withExtendedLifetime(root) {
            try withUnsafeTemporaryAllocation(of: Row.self, capacity: 1) { slot in
                let lent = slot.baseAddress!
                try withUnsafeTemporaryAllocation(of: UnsafePointer<Leaf>?.self, capacity: batch) { found in
                    try serials.withUnsafeBufferPointer { serials in
                        var start = 0
                        while start < serials.count {
                            let end = Swift.min(start &+ batch, serials.count)
                            // The descents first, a batch at a time: they do not depend on each other, so the
                            // processor overlaps their cache misses, which one descent between two calls of `body`
                            // leaves it no room to do.
                            for k in start..<end {
                                let l = EntityTable.split(serials[k]).leaf
                                found[k &- start] =
                                    l == tailKey
                                    ? nil : SerialTrie<Leaf>.itemAddress(forKey: l, root: root, height: height)
                            }
                            if !columns.isEmpty {
                                // The columns read, then (their lines on the way) their values: within each pass
                                // the rows do not depend on each other, so their cache misses overlap.
                                let stride = MemoryLayout<Column>.stride
                                for k in start..<end {
                                    guard let leaf = found[k &- start] else { continue }
                                    let list = UnsafeRawPointer(leaf) + ArrayStorageHint.leafColumns
                                    for c in columns { ArrayStorageHint.prefetch(list, byteOffset: c &* stride) }
                                }
                                for k in start..<end {
                                    guard let leaf = found[k &- start] else { continue }
                                    let r = Int(truncatingIfNeeded: serials[k]) & (Leaf.width - 1)
                                    let list = UnsafeRawPointer(leaf) + ArrayStorageHint.leafColumns
                                    guard let storage = list.load(as: UnsafeRawPointer?.self) else { continue }
                                    let first = (storage + ArrayStorageHint.header).assumingMemoryBound(to: Column.self)
                                    for c in columns { Column.prefetchValue(first + c, r) }
                                }
                            }
                            for k in start..<end {
                                let serial = serials[k]
                                let (l, r) = EntityTable.split(serial)
                                let id = ObjectID(entity: entity, serial: serial)
                                if l == tailKey, let tail = leaves.tail?.value, tail.contains(r) {
                                    try body(Row(leaf: tail, id: id))
                                    continue
                                }
                                guard let leaf = found[k &- start], leaf.pointee.contains(r) else {
                                    preconditionFailure("an index entry without a live object")
                                }
                                try Row.withLent(leaf, id, in: lent, body)
                            }
                            start = end
                        }
                    }
                }
            }
        }
    }

    /// How many rows' leaves `forEach` looks up before it reads the rows.
    static let batch = 16
}

extension Row {
    /// Calls `body` with a row of the leaf at `leaf` whose arrays are lent, not retained: the row is written into
    /// `slot` (see `lend`), moved out of it for `body` and back in after, so the compiler neither retains it to pass it
    /// nor releases it after. `slot` is never deinitialized. A copy `body` makes retains as any copy does.
    @inline(__always)
    static func withLent(
        _ leaf: UnsafePointer<Leaf>, _ id: ObjectID, in slot: UnsafeMutablePointer<Row>, _ body: (Row) throws -> Void
    ) rethrows {
        lend(leaf, id, into: slot)
        let row = slot.move()
        do {
            try body(row)
            slot.initialize(to: row)
        } catch {
            slot.initialize(to: row)
            throw error
        }
    }

    /// Writes into `slot` a row of the leaf at `leaf` that holds the leaf's arrays without retaining them, so the
    /// slot must never be deinitialized and must not be read once the leaf may be gone.
    @inline(__always)
    static func lend(_ leaf: UnsafePointer<Leaf>, _ id: ObjectID, into slot: UnsafeMutablePointer<Row>) {
        let from = UnsafeRawPointer(leaf)
        let to = UnsafeMutableRawPointer(slot)
        to.storeBytes(
            of: from.load(fromByteOffset: MemoryLayout<Leaf>.offset(of: \.columns)!, as: UInt.self),
            toByteOffset: MemoryLayout<Row>.offset(of: \.columns)!, as: UInt.self)
        // nil (a zero word) for the shared empty array, as `init` makes it; compared by address, so that a row of an
        // entity with relationships does not read its link array's header to find out.
        let links = from.load(fromByteOffset: MemoryLayout<Leaf>.offset(of: \.links)!, as: UInt.self)
        let empty = unsafeBitCast([LinkColumn](), to: UInt.self)
        to.storeBytes(
            of: links == empty ? 0 : links, toByteOffset: MemoryLayout<Row>.offset(of: \.links)!, as: UInt.self)
        to.storeBytes(of: id, toByteOffset: MemoryLayout<Row>.offset(of: \.id)!, as: ObjectID.self)
    }
}

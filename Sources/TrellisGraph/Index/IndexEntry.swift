import TrellisCore

/// The key of an ordered index: the indexed attribute values, then the object's serial so equal values stay distinct.
///
/// The first value is held inline so a one-attribute index allocates nothing per entry. Real entries never use serial
/// 0 or `UInt64.max`: those mark probes, the bounds of a range over a prefix of the indexed values (serial 0 sorts
/// before every entry with that prefix, `UInt64.max` after).
@usableFromInline package struct IndexEntry: Comparable, Sendable {
    var first: Value
    var rest: [Value]
    package var serial: UInt64

    init(_ values: ArraySlice<Value>, serial: UInt64) {
        self.first = values.first ?? .null
        self.rest = values.count > 1 ? Array(values.dropFirst()) : []
        self.serial = serial
    }

    init(_ values: [Value], serial: UInt64) {
        self.init(values[...], serial: serial)
    }

    /// The entries of an element index (`EntityLayout.IndexLayout.isElements`) for a collection value: one per
    /// distinct element, none for null or an empty collection; for a dictionary (`pairs`), one per key–value pair.
    static func elementEntries(_ collection: Value, serial: UInt64, pairs: Bool = false) -> [IndexEntry] {
        guard case .list(let elements) = collection, !elements.isEmpty else { return [] }
        if pairs {
            return stride(from: 0, to: elements.count - 1, by: 2).map {
                IndexEntry([elements[$0], elements[$0 + 1]], serial: serial)
            }
        }
        var seen = Set<Value>()
        var entries: [IndexEntry] = []
        for e in elements where seen.insert(e).inserted { entries.append(IndexEntry([e], serial: serial)) }
        return entries
    }

    static func lowerProbe(_ values: [Value]) -> IndexEntry { IndexEntry(values, serial: 0) }
    static func upperProbe(_ values: [Value]) -> IndexEntry { IndexEntry(values, serial: .max) }

    /// Compares the values only, ignoring the serial; a shorter prefix compares equal to longer keys it starts.
    static func compareValues(_ lhs: IndexEntry, _ rhs: IndexEntry) -> Int {
        let c = Value.compare(lhs.first, rhs.first)
        if c != 0 { return c }
        for i in 0..<min(lhs.rest.count, rhs.rest.count) {
            let c = Value.compare(lhs.rest[i], rhs.rest[i])
            if c != 0 { return c }
        }
        return 0
    }

    @usableFromInline package static func < (lhs: IndexEntry, rhs: IndexEntry) -> Bool {
        let c = compareValues(lhs, rhs)
        if c != 0 { return c < 0 }
        if lhs.rest.count < rhs.rest.count { return lhs.serial != .max }
        if lhs.rest.count > rhs.rest.count { return rhs.serial == .max }
        return lhs.serial < rhs.serial
    }

    @usableFromInline package static func == (lhs: IndexEntry, rhs: IndexEntry) -> Bool {
        compareValues(lhs, rhs) == 0 && lhs.rest.count == rhs.rest.count && lhs.serial == rhs.serial
    }
}

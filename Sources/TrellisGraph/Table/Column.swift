import Foundation
import TrellisCore

/// One attribute's values for the 64 rows of a leaf, stored by kind so that numbers cost 8 bytes and booleans one bit.
///
/// Only the array that matches the attribute's kind is allocated; the others stay empty (no allocation).
package struct Column: Sendable {
    package enum Kind: UInt8, Sendable {
        case bool, int, double, date, string, other

        package init(_ type: AttributeType) {
            switch type {
            case .bool: self = .bool
            case .int, .int8, .int16, .int32, .int64: self = .int
            case .double, .float: self = .double
            case .date: self = .date
            case .string: self = .string
            case .data, .uuid, .url, .decimal: self = .other
            }
        }
    }

    @usableFromInline package let kind: Kind
    /// Bit `r` set: row `r` holds null.
    @usableFromInline package var nulls: UInt64
    @usableFromInline package var bits: UInt64
    @usableFromInline package var ints: [Int64]
    @usableFromInline package var doubles: [Double]
    @usableFromInline package var strings: PackedStrings
    @usableFromInline package var others: [Value]

    // Every field set once, each array made where it is stored: assigning an array over a default empty one made the
    // optimizer copy the whole column (retaining each of its arrays) into the leaf that a new column goes to.
    init(kind: Kind) {
        self.kind = kind
        nulls = 0
        bits = 0
        ints = kind == .int ? .zeros(Leaf.width) : []
        doubles = kind == .double || kind == .date ? .zeros(Leaf.width) : []
        strings = PackedStrings()
        others = kind == .other ? Array(repeating: .null, count: Leaf.width) : []
    }

    @inlinable @inline(__always)
    package func isNull(_ row: Int) -> Bool { nulls & (1 << UInt64(row)) != 0 }

    // Inlined so that reading one value through `columns[c]` reads the fields in place instead of copying the column
    // (and retaining its arrays) for the call.
    @inlinable @inline(__always)
    package func value(_ row: Int) -> Value {
        if isNull(row) { return .null }
        switch kind {
        case .bool: return .bool(bits & (1 << UInt64(row)) != 0)
        case .int: return .int(ints[row])
        case .double: return .double(doubles[row])
        case .date: return .date(Date(timeIntervalSinceReferenceDate: doubles[row]))
        case .string: return .string(strings.string(row))
        case .other: return others[row]
        }
    }

    /// Stores `value` at `row`; returns false (storing nothing) when the value's case does not fit this column.
    @discardableResult
    mutating func set(_ row: Int, _ value: Value) -> Bool {
        let bit: UInt64 = 1 << UInt64(row)
        switch (kind, value) {
        case (_, .null):
            nulls |= bit
            clear(row)
            return true
        case (.bool, .bool(let b)): bits = b ? bits | bit : bits & ~bit
        case (.int, .int(let i)): ints[row] = i
        case (.double, .double(let d)): doubles[row] = d
        case (.date, .date(let d)): doubles[row] = d.timeIntervalSinceReferenceDate
        case (.string, .string(let s)): strings.set(row, s)
        case (.other, .data), (.other, .uuid), (.other, .url), (.other, .decimal): others[row] = value
        default: return false
        }
        nulls &= ~bit
        return true
    }

    /// Whether `set(_:_:)` would store `value`: null, or a case that fits this column.
    @inline(__always)
    func accepts(_ value: Value) -> Bool {
        switch (kind, value) {
        case (_, .null), (.bool, .bool), (.int, .int), (.double, .double), (.date, .date), (.string, .string),
            (.other, .data), (.other, .uuid), (.other, .url), (.other, .decimal):
            return true
        default: return false
        }
    }

    /// Stores value `c` of each insert in `run` at its row, as `set` would row by row; every value must be one this
    /// column `accepts`. A run of new rows is written a column at a time, so each array is checked for sharing once
    /// per run rather than once per value, and the inserts are read in place (no retain of each row's values).
    mutating func fill(_ c: Int, from inserts: UnsafeBufferPointer<ChangeSet.Insert>, _ run: Range<Int>) {
        @inline(__always) func row(_ p: Int) -> Int { Int(inserts[p].id.serial & Leaf.mask) }
        var nulls = self.nulls
        switch kind {
        case .bool:
            var bits = self.bits
            for p in run {
                let bit: UInt64 = 1 << UInt64(row(p))
                if case .bool(let b) = inserts[p].values[c] {
                    bits = b ? bits | bit : bits & ~bit
                    nulls &= ~bit
                } else {
                    bits &= ~bit
                    nulls |= bit
                }
            }
            self.bits = bits
        case .int:
            ints.withUnsafeMutableBufferPointer { out in
                for p in run {
                    let r = row(p)
                    if case .int(let i) = inserts[p].values[c] {
                        out[r] = i
                        nulls &= ~(1 << UInt64(r))
                    } else {
                        nulls |= 1 << UInt64(r)
                    }
                }
            }
        case .double, .date:
            doubles.withUnsafeMutableBufferPointer { out in
                for p in run {
                    let r = row(p)
                    switch inserts[p].values[c] {
                    case .double(let d):
                        out[r] = d
                        nulls &= ~(1 << UInt64(r))
                    case .date(let d):
                        out[r] = d.timeIntervalSinceReferenceDate
                        nulls &= ~(1 << UInt64(r))
                    default: nulls |= 1 << UInt64(r)
                    }
                }
            }
        case .string, .other:
            self.nulls = nulls
            for p in run { set(row(p), inserts[p].values[c]) }
            return
        }
        self.nulls = nulls
    }

    /// Drops what row `row` holds, so a deleted object's strings and blobs are released.
    mutating func clear(_ row: Int) {
        switch kind {
        case .string: if !strings.isEmpty(row) { strings.set(row, "") }
        case .other: if !others[row].isNull { others[row] = .null }
        case .bool: bits &= ~(1 << UInt64(row))
        default: break
        }
    }
}

/// One relationship's targets for the 64 rows of a leaf: a serial per row for to-one (0: none), a persistent set per
/// row for to-many.
package struct LinkColumn: Sendable {
    @usableFromInline package var one: [UInt64] = []
    @usableFromInline package var many: [SerialTrie<Void>] = []

    init(toMany: Bool) {
        if toMany {
            many = Array(repeating: SerialTrie<Void>(), count: Leaf.width)
        } else {
            one = .zeros(Leaf.width)
        }
    }

    @inlinable package var isToMany: Bool { one.isEmpty }
}

/// The rows of 64 consecutive serials of one entity, column by column.
///
/// Leaves are values inside the entity's `SerialTrie`; a commit that changes one row copies the trie path, the leaf's
/// column list and the one column it touches (512 bytes for a number), not the store.
package struct Leaf: Sendable {
    package static let width = 64
    package static let shift: UInt64 = 6
    package static let mask: UInt64 = 63

    @usableFromInline package var present: UInt64 = 0
    @usableFromInline package var columns: [Column]
    @usableFromInline package var links: [LinkColumn]

    package init(_ layout: EntityLayout) {
        columns = layout.attributes.map { Column(kind: Column.Kind($0.type)) }
        links = layout.relationships.map { LinkColumn(toMany: $0.isToMany) }
    }

    init(present: UInt64, columns: [Column], links: [LinkColumn]) {
        self.present = present
        self.columns = columns
        self.links = links
    }

    @inlinable @inline(__always)
    package func contains(_ row: Int) -> Bool { present & (1 << UInt64(row)) != 0 }

    /// The rows whose bits are set in `present`, ascending.
    static func rows(_ present: UInt64) -> some Sequence<Int> {
        sequence(state: present) { (m: inout UInt64) -> Int? in
            guard m != 0 else { return nil }
            defer { m &= m - 1 }
            return m.trailingZeroBitCount
        }
    }

    /// Drops everything row `row` holds (values, null marks, links), so a deleted object's strings, blobs and target
    /// sets are released; `present` is the caller's.
    mutating func clearRow(_ row: Int) {
        let bit: UInt64 = 1 << UInt64(row)
        for c in columns.indices {
            columns[c].clear(row)
            columns[c].nulls &= ~bit
        }
        for k in links.indices {
            if links[k].isToMany {
                if !links[k].many[row].isEmpty { links[k].many[row] = SerialTrie() }
            } else {
                links[k].one[row] = 0
            }
        }
    }

    func targets(_ row: Int, _ relationship: Int) -> [UInt64] {
        let link = links[relationship]
        if link.isToMany {
            var out: [UInt64] = []
            out.reserveCapacity(link.many[row].count)
            link.many[row].forEach { serial, _ in out.append(serial) }
            return out
        }
        let t = link.one[row]
        return t == 0 ? [] : [t]
    }

    // Reading through `links` in place: binding `links[relationship]` to a local would copy it and retain its arrays.

    @inlinable package func targetCount(_ row: Int, _ relationship: Int) -> Int {
        links.withUnsafeBufferPointer { links in
            links[relationship].isToMany
                ? links[relationship].many[row].count : (links[relationship].one[row] == 0 ? 0 : 1)
        }
    }

    func hasTarget(_ row: Int, _ relationship: Int, _ serial: UInt64) -> Bool {
        links.withUnsafeBufferPointer { links in
            links[relationship].isToMany
                ? links[relationship].many[row].contains(serial) : links[relationship].one[row] == serial
        }
    }
}

extension Array where Element: ExpressibleByIntegerLiteral {
    /// `count` zeros. `Array(repeating:count:)` allocates through the standard library's unspecialized
    /// `_allocateBufferUninitialized`, which looks the buffer's class up in the runtime's metadata cache on every
    /// call (about 120 instructions, 3.6% of a checkpoint load's, which makes a dozen arrays for every leaf);
    /// `reserveCapacity` allocates through code specialized here, whose class is looked up once.
    @inlinable @inline(__always)
    package static func zeros(_ count: Int) -> [Element] {
        var zeros: [Element] = []
        zeros.reserveCapacity(count)
        zeros.append(contentsOf: repeatElement(0, count: count))
        return zeros
    }
}

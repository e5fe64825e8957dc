import Foundation
import TrellisCore

/// The rows of 64 consecutive serials of one entity, column by column.
///
/// Leaves are values inside the entity's `SerialTrie`; a commit that changes one row copies the trie path, the leaf's
/// column list and the one column it touches (512 bytes for a number), not the store.
@usableFromInline package struct Leaf: Sendable {
    @usableFromInline package static let width = 64
    @usableFromInline package static let shift: UInt64 = 6
    package static let mask: UInt64 = 63

    @usableFromInline package var present: UInt64 = 0
    @usableFromInline package var columns: [Column]
    @usableFromInline package var links: [LinkColumn]

    package init(_ layout: EntityLayout) {
        columns = layout.attributes.map { Column(kind: Column.Kind($0.type)) }
        links = layout.relationships.map { LinkColumn($0) }
    }

    init(present: UInt64, columns: [Column], links: [LinkColumn]) {
        self.present = present
        self.columns = columns
        self.links = links
    }

    @inlinable @inline(__always)
    package func contains(_ row: Int) -> Bool { present & (1 << UInt64(row)) != 0 }

    /// Narrows each int column whose live values span less than 2^32 (`Column.narrow(rows:)`): a leaf built in bulk
    /// is narrowed once it is finished.
    package mutating func narrowInts() {
        for c in columns.indices where columns[c].kind == .int { columns[c].narrow(rows: present) }
    }

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
            if links[k].isOrdered {
                if links[k].ordered[row].count != 0 { links[k].ordered[row] = OrderedTargets() }
            } else if links[k].isToMany {
                if !links[k].many[row].isEmpty { links[k].many[row] = SerialTrie() }
            } else {
                links[k].one[row] = 0
            }
        }
    }

    func targets(_ row: Int, _ relationship: Int) -> [UInt64] { Self.targets(in: links, row, relationship) }

    /// `targets(_:_:)` of a leaf whose link columns are `links`.
    static func targets(in links: [LinkColumn], _ row: Int, _ relationship: Int) -> [UInt64] {
        let link = links[relationship]
        if link.isOrdered { return link.ordered[row].serials }
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
            links[relationship].isOrdered
                ? links[relationship].ordered[row].count
                : links[relationship].isToMany
                    ? links[relationship].many[row].count : (links[relationship].one[row] == 0 ? 0 : 1)
        }
    }

    func hasTarget(_ row: Int, _ relationship: Int, _ serial: UInt64) -> Bool {
        links.withUnsafeBufferPointer { links in
            links[relationship].isOrdered
                ? links[relationship].ordered[row].contains(serial)
                : links[relationship].isToMany
                    ? links[relationship].many[row].contains(serial) : links[relationship].one[row] == serial
        }
    }
}

extension Leaf {
    /// The value of one row in one column, read in place (binding `columns[c]` would copy the column and retain its
    /// arrays).
    @inlinable @inline(__always)
    package func value(column c: Int, row r: Int) -> Value {
        columns.withUnsafeBufferPointer { $0[c].value(r) }
    }

    /// Whether one row holds null in one column, read in place.
    @inlinable @inline(__always)
    package func isNull(column c: Int, row r: Int) -> Bool {
        columns.withUnsafeBufferPointer { $0[c].isNull(r) }
    }

    /// Calls `body` with each target serial of a relationship of row `row`, in ascending order (an ordered
    /// relationship: in list order), without building an array.
    @inlinable @inline(__always)
    package func forEachTarget(_ row: Int, _ relationship: Int, _ body: (UInt64) throws -> Void) rethrows {
        try links.withUnsafeBufferPointer { links in
            if links[relationship].isOrdered {
                for serial in links[relationship].ordered[row].serials { try body(serial) }
            } else if links[relationship].isToMany {
                try links[relationship].many[row].forEach { serial, _ in try body(serial) }
            } else if links[relationship].one[row] != 0 {
                try body(links[relationship].one[row])
            }
        }
    }
}

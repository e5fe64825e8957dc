import Foundation
import TrellisCore

/// A live object read in place from its leaf: attribute reads cost an array access, no lookup.
///
/// ```swift
/// for row in snapshot.rows(entity: item) { total += row.int(n1) ?? 0 }
/// ```
public struct Row: Sendable {
    let leaf: Leaf
    let index: Int
    public let id: ObjectID

    public func value(_ attribute: AttributeKey) -> Value { leaf.columns[attribute.index].value(index) }
    public func value(at attribute: Int) -> Value { leaf.columns[attribute].value(index) }

    // The typed reads index into the leaf in place: binding `leaf.columns[i]` to a local would copy the column and
    // retain its four arrays on every read.

    public func int(_ attribute: AttributeKey) -> Int64? {
        let i = attribute.index
        guard leaf.columns[i].kind == .int, leaf.columns[i].nulls & (1 << UInt64(index)) == 0 else { return nil }
        return leaf.columns[i].ints[index]
    }

    public func double(_ attribute: AttributeKey) -> Double? {
        let i = attribute.index
        guard leaf.columns[i].kind == .double, leaf.columns[i].nulls & (1 << UInt64(index)) == 0 else { return nil }
        return leaf.columns[i].doubles[index]
    }

    public func bool(_ attribute: AttributeKey) -> Bool? {
        let i = attribute.index
        guard leaf.columns[i].kind == .bool, leaf.columns[i].nulls & (1 << UInt64(index)) == 0 else { return nil }
        return leaf.columns[i].bits & (1 << UInt64(index)) != 0
    }

    public func string(_ attribute: AttributeKey) -> String? {
        let i = attribute.index
        // Through the buffer: `leaf.columns[i].strings` copied the column's string storage out first (a retain and a
        // release of both its arrays per read).
        return leaf.columns.withUnsafeBufferPointer { columns in
            guard columns[i].kind == .string, columns[i].nulls & (1 << UInt64(index)) == 0 else { return nil }
            return PackedStrings.string(at: (columns.baseAddress! + i).pointer(to: \.strings)!, index)
        }
    }

    /// A date attribute's value, read without building a `Value`.
    public func date(_ attribute: AttributeKey) -> Date? {
        let i = attribute.index
        guard leaf.columns[i].kind == .date, leaf.columns[i].nulls & (1 << UInt64(index)) == 0 else { return nil }
        return Date(timeIntervalSinceReferenceDate: leaf.columns[i].doubles[index])
    }

    public var values: [Value] { leaf.columns.map { $0.value(index) } }

    public func targetSerials(_ relationship: RelationshipKey) -> [UInt64] { leaf.targets(index, relationship.index) }
}

/// The live objects of one entity in ascending serial order, walking leaves directly.
public struct RowSequence: Sequence, Sendable {
    let entity: UInt32
    let leaves: SerialTrie<Leaf>

    public struct Iterator: IteratorProtocol {
        var leafIterator: SerialTrie<Leaf>.Iterator
        let entity: UInt32
        var current: (key: UInt64, value: Leaf)?
        var remaining: UInt64 = 0

        public mutating func next() -> Row? {
            while true {
                if remaining != 0, let (key, leaf) = current {
                    let r = remaining.trailingZeroBitCount
                    remaining &= remaining - 1
                    let serial = key << Leaf.shift | UInt64(r)
                    return Row(leaf: leaf, index: r, id: ObjectID(entity: entity, serial: serial))
                }
                guard let next = leafIterator.next() else { return nil }
                current = next
                remaining = next.value.present
            }
        }
    }

    public func makeIterator() -> Iterator {
        Iterator(leafIterator: leaves.makeIterator(), entity: entity)
    }
}

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
    let leaf: Leaf
    let index: Int
    /// The object's ID.
    public let id: ObjectID

    /// The value of an attribute of this object's entity.
    /// - Complexity: O(1).
    public func value(_ attribute: AttributeKey) -> Value { leaf.columns[attribute.index].value(index) }
    package func value(at attribute: Int) -> Value { leaf.columns[attribute].value(index) }

    // The typed reads index into the leaf in place: binding `leaf.columns[i]` to a local would copy the column and
    // retain its four arrays on every read.

    /// An integer attribute's value, read without building a `Value`; nil when null or not an integer attribute.
    /// - Complexity: O(1).
    public func int(_ attribute: AttributeKey) -> Int64? {
        let i = attribute.index
        guard leaf.columns[i].kind == .int, leaf.columns[i].nulls & (1 << UInt64(index)) == 0 else { return nil }
        return leaf.columns[i].int(at: index)
    }

    /// A `Double` (or `Float`) attribute's value, read in place; nil when null or not such an attribute.
    /// - Complexity: O(1).
    public func double(_ attribute: AttributeKey) -> Double? {
        let i = attribute.index
        guard leaf.columns[i].kind == .double, leaf.columns[i].nulls & (1 << UInt64(index)) == 0 else { return nil }
        return leaf.columns[i].doubles[index]
    }

    /// A Boolean attribute's value, read in place; nil when null or not a Boolean attribute.
    /// - Complexity: O(1).
    public func bool(_ attribute: AttributeKey) -> Bool? {
        let i = attribute.index
        guard leaf.columns[i].kind == .bool, leaf.columns[i].nulls & (1 << UInt64(index)) == 0 else { return nil }
        return leaf.columns[i].bits & (1 << UInt64(index)) != 0
    }

    /// A string attribute's value, read in place; nil when null or not a string attribute.
    /// - Complexity: O(1) plus the string's copy.
    public func string(_ attribute: AttributeKey) -> String? {
        let i = attribute.index
        // Through the buffer: `leaf.columns[i].strings` copied the column's string storage out first (a retain and a
        // release of both its arrays per read).
        return leaf.columns.withUnsafeBufferPointer { columns in
            guard columns[i].kind == .string, columns[i].nulls & (1 << UInt64(index)) == 0 else { return nil }
            return PackedStrings.string(at: (columns.baseAddress! + i).pointer(to: \.strings)!, index)
        }
    }

    /// A date attribute's value, read without building a `Value`; nil when null or not a date attribute.
    /// - Complexity: O(1).
    public func date(_ attribute: AttributeKey) -> Date? {
        let i = attribute.index
        guard leaf.columns[i].kind == .date, leaf.columns[i].nulls & (1 << UInt64(index)) == 0 else { return nil }
        return Date(timeIntervalSinceReferenceDate: leaf.columns[i].doubles[index])
    }

    /// All attribute values, in schema order.
    /// - Complexity: O(a) for a attributes.
    public var values: [Value] { leaf.columns.map { $0.value(index) } }

    /// The serial numbers of a relationship's targets, in ascending order (the targets' entity is the relationship's
    /// target entity).
    /// - Complexity: O(k) for k targets.
    public func targetSerials(_ relationship: RelationshipKey) -> [UInt64] { leaf.targets(index, relationship.index) }
}

/// The live objects of one entity in ascending serial order, walking leaves directly.
public struct RowSequence: Sequence, Sendable {
    let entity: UInt32
    let leaves: SerialTrie<Leaf>

    /// Walks the rows of one entity, leaf by leaf.
    public struct Iterator: IteratorProtocol {
        var leafIterator: SerialTrie<Leaf>.Iterator
        let entity: UInt32
        var current: (key: UInt64, value: Leaf)?
        var remaining: UInt64 = 0

        /// The next live object, or nil at the end.
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

    /// An iterator from the lowest serial.
    public func makeIterator() -> Iterator {
        Iterator(leafIterator: leaves.makeIterator(), entity: entity)
    }
}

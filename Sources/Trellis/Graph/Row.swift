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

    public func int(_ attribute: AttributeKey) -> Int64? {
        let c = leaf.columns[attribute.index]
        return c.kind == .int && !c.isNull(index) ? c.ints[index] : nil
    }

    public func double(_ attribute: AttributeKey) -> Double? {
        let c = leaf.columns[attribute.index]
        return c.kind == .double && !c.isNull(index) ? c.doubles[index] : nil
    }

    public func bool(_ attribute: AttributeKey) -> Bool? {
        let c = leaf.columns[attribute.index]
        return c.kind == .bool && !c.isNull(index) ? c.bits & (1 << UInt64(index)) != 0 : nil
    }

    public func string(_ attribute: AttributeKey) -> String? {
        let c = leaf.columns[attribute.index]
        return c.kind == .string && !c.isNull(index) ? c.strings[index] : nil
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

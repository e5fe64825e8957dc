import Foundation
import TrellisCore

/// One relationship's targets for the 64 rows of a leaf: a serial per row for to-one (0: none), a persistent set per
/// row for to-many, a persistent list per row for ordered to-many.
@usableFromInline package struct LinkColumn: Sendable {
    @usableFromInline package var one: [UInt64] = []
    @usableFromInline package var many: [SerialTrie<Void>] = []
    @usableFromInline package var ordered: [OrderedTargets] = []

    init(toMany: Bool, ordered: Bool = false) {
        if ordered {
            self.ordered = Array(repeating: OrderedTargets(), count: Leaf.width)
        } else if toMany {
            many = Array(repeating: SerialTrie<Void>(), count: Leaf.width)
        } else {
            one = .zeros(Leaf.width)
        }
    }

    init(_ relationship: EntityLayout.RelationshipLayout) {
        self.init(toMany: relationship.isToMany, ordered: relationship.isOrdered)
    }

    @inlinable package var isToMany: Bool { one.isEmpty }
    /// Whether the rows hold ordered lists (`ordered`), not sets.
    @inlinable package var isOrdered: Bool { !ordered.isEmpty }

    /// This column as a relationship of `relationship`'s shape holds it: a set becomes a list in serial order, a
    /// list becomes a set; anything else is returned as is (to-one and to-many are not converted).
    func shaped(like relationship: EntityLayout.RelationshipLayout) -> LinkColumn {
        guard isToMany, relationship.isToMany, isOrdered != relationship.isOrdered else { return self }
        var out = LinkColumn(relationship)
        for row in 0..<Leaf.width {
            if relationship.isOrdered {
                var serials: [UInt64] = []
                many[row].forEach { serial, _ in serials.append(serial) }
                out.ordered[row] = OrderedTargets(serials)
            } else {
                for serial in ordered[row].serials { out.many[row][serial] = () }
            }
        }
        return out
    }
}

import Foundation
import TrellisCore

/// One relationship's targets for the 64 rows of a leaf: a serial per row for to-one (0: none), a persistent set per
/// row for to-many.
@usableFromInline package struct LinkColumn: Sendable {
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

import TrellisCore

/// Remembers the last leaf it looked up, so that a run of nearby serials (a cascade's, numbered in the order it was
/// built) pays one trie descent per leaf instead of one per row.
///
/// Only for reading rows whose contents do not change while the cursor is in use.
@usableFromInline package struct LeafCursor {
    private var entity = UInt32.max
    private var key: UInt64 = 0
    @usableFromInline var found = false
    /// The leaf at `entity` and `key` when `found`.
    @usableFromInline var leaf = Leaf()

    @usableFromInline mutating func move(to id: ObjectID, in tables: [EntityTable]) -> Int {
        let (l, r) = EntityTable.split(id.serial)
        if id.entity != entity || l != key {
            entity = id.entity
            key = l
            if Int(id.entity) < tables.count, let next = tables[Int(id.entity)].leaves[l] {
                leaf = next
                found = true
            } else {
                leaf = Leaf()
                found = false
            }
        }
        return r
    }

    /// Whether the object is live.
    mutating func contains(_ id: ObjectID, in tables: [EntityTable]) -> Bool {
        let r = move(to: id, in: tables)
        return found && leaf.contains(r)
    }

    /// Calls `body` with the leaf and row of a live object (the leaf is lent, not copied); nil when it is not live.
    @inlinable package mutating func withRow<R>(
        _ id: ObjectID, in tables: [EntityTable], _ body: (Leaf, Int) throws -> R
    ) rethrows -> R? {
        let r = move(to: id, in: tables)
        guard found, leaf.contains(r) else { return nil }
        return try body(leaf, r)
    }

    package init(key: UInt64 = 0) {
        self.key = key
    }
}

extension Leaf {
    /// A leaf of no columns and no rows, for a cursor that holds none.
    fileprivate init() {
        columns = []
        links = []
    }
}

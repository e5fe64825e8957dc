import TrellisCore

/// A deleted object's row in the version it was deleted from: its leaf (a copy, which shares the leaf's storage;
/// leaves never change in place once another version shares them) and its position there.
///
/// A big cascade records its deletes this way: building each one's arrays of values and targets would cost the
/// committing thread several allocations an object. The journal's encoder reads the row
/// directly (`ChangeSetCodec`); `values` and `relationships` build the arrays when asked.
package struct DeletedRow: Sendable {
    package let leaf: Leaf
    package let row: Int
    /// The relationships of the object's entity (the schema's own array).
    package let links: [EntityLayout.RelationshipLayout]

    /// Cascades of at least this many deletes record them as rows: the size from which the journal's encoder runs on
    /// another thread (`BackgroundWork<[UInt8]>`), where reading the rows costs the committing thread nothing.
    package static var recordedFrom: Int { BackgroundWork<[[UInt8]]>.minimumChanges }

    var values: [Value] { leaf.columns.indices.map { leaf.value(column: $0, row: row) } }

    var relationships: [[ObjectID]] {
        links.indices.map { k in
            var out: [ObjectID] = []
            leaf.forEachTarget(row, k) { out.append(ObjectID(entity: links[k].target, serial: $0)) }
            return out
        }
    }

    /// How many targets the object's relationships held, without building them.
    var targetCount: Int { links.indices.reduce(0) { $0 + leaf.targetCount(row, $1) } }

    package init(leaf: Leaf, row: Int, links: [EntityLayout.RelationshipLayout]) {
        self.leaf = leaf
        self.row = row
        self.links = links
    }
}

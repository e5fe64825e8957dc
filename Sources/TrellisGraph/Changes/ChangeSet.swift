import TrellisCore

/// The one description of a transaction: what it inserted, changed, linked and deleted.
///
/// Commit, the journal, recovery, notifications and history all speak it. A change set produced by a commit is
/// *resolved*: inserts carry every attribute value, updates carry old and new values, deletes list every object the
/// delete rules removed (cascades expanded) with the values it had, and relationship edits are explicit, including
/// the unlinks a to-one reassignment implies. `Graph.applying(_:)` replays a resolved change set exactly.
///
/// Attributes and relationships are named by their position in the entity (see `Schema`).
public struct ChangeSet: Sendable, Equatable {
    public struct Insert: Sendable, Equatable {
        public var id: ObjectID
        /// One value per attribute of the entity, in schema order.
        public var values: [Value]
        public init(id: ObjectID, values: [Value]) {
            self.id = id
            self.values = values
        }
    }

    public struct AttributeChange: Sendable, Equatable {
        public var attribute: Int
        public var old: Value
        public var new: Value
        public init(attribute: Int, old: Value, new: Value) {
            self.attribute = attribute
            self.old = old
            self.new = new
        }
    }

    public struct Update: Sendable, Equatable {
        public var id: ObjectID
        public var changes: [AttributeChange]
        public init(id: ObjectID, changes: [AttributeChange]) {
            self.id = id
            self.changes = changes
        }
    }

    public struct RelationshipEdit: Sendable, Equatable {
        public enum Kind: UInt8, Sendable {
            case link = 1
            case unlink = 2
        }
        public var kind: Kind
        public var source: ObjectID
        /// The relationship's position in the source's entity; the inverse end is kept in step.
        public var relationship: Int
        public var target: ObjectID
        public init(_ kind: Kind, source: ObjectID, relationship: Int, target: ObjectID) {
            self.kind = kind
            self.source = source
            self.relationship = relationship
            self.target = target
        }
    }

    public struct Delete: Sendable, Equatable {
        public var id: ObjectID
        /// What the object held: given as arrays, or its row in the version it was deleted from.
        package var record: DeleteRecord
        /// The attribute values the object had, in schema order (history and undo read them).
        public var values: [Value] {
            get { record.values }
            set { record = .given(values: newValue, relationships: record.relationships) }
        }
        /// The targets of each relationship when the object was deleted, in schema order.
        public var relationships: [[ObjectID]] {
            get { record.relationships }
            set { record = .given(values: record.values, relationships: newValue) }
        }
        public init(id: ObjectID, values: [Value], relationships: [[ObjectID]]) {
            self.id = id
            self.record = .given(values: values, relationships: relationships)
        }

        /// A delete that reads its values and targets from the deleted row when asked (see `DeletedRow`).
        package init(id: ObjectID, row: DeletedRow) {
            self.id = id
            self.record = .row(row)
        }

        public static func == (a: Delete, b: Delete) -> Bool {
            a.id == b.id && a.values == b.values && a.relationships == b.relationships
        }
    }

    public var inserts: [Insert]
    public var updates: [Update]
    public var edits: [RelationshipEdit]
    public var deletes: [Delete]

    public init(
        inserts: [Insert] = [], updates: [Update] = [], edits: [RelationshipEdit] = [], deletes: [Delete] = []
    ) {
        self.inserts = inserts
        self.updates = updates
        self.edits = edits
        self.deletes = deletes
    }

    public var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && edits.isEmpty && deletes.isEmpty }
}

/// What a `ChangeSet.Delete` holds of its object.
package enum DeleteRecord: Sendable {
    case given(values: [Value], relationships: [[ObjectID]])
    case row(DeletedRow)

    var values: [Value] {
        switch self {
        case .given(let values, _): values
        case .row(let row): row.values
        }
    }

    var relationships: [[ObjectID]] {
        switch self {
        case .given(_, let relationships): relationships
        case .row(let row): row.relationships
        }
    }
}

/// A deleted object's row in the version it was deleted from: its leaf (a copy, which shares the leaf's storage;
/// leaves never change in place once another version shares them) and its position there.
///
/// A big cascade records its deletes this way: building each one's arrays of values and targets cost the committing
/// thread four to seven allocations an object (W6: 111,111 deleted folders). The journal's encoder reads the row
/// directly (`ChangeSetCodec`); `values` and `relationships` build the arrays when asked.
package struct DeletedRow: Sendable {
    package let leaf: Leaf
    package let row: Int
    /// The relationships of the object's entity (the schema's own array).
    package let links: [EntityLayout.RelationshipLayout]

    /// Cascades of at least this many deletes record them as rows: the size from which the journal's encoder runs on
    /// another thread (`BackgroundWork<[UInt8]>`), where reading the rows costs the committing thread nothing.
    package static var recordedFrom: Int { BackgroundWork<[UInt8]>.minimumChanges }

    var values: [Value] { leaf.columns.indices.map { leaf.value(column: $0, row: row) } }

    var relationships: [[ObjectID]] {
        links.indices.map { k in
            var out: [ObjectID] = []
            leaf.forEachTarget(row, k) { out.append(ObjectID(entity: links[k].target, serial: $0)) }
            return out
        }
    }

    package init(leaf: Leaf, row: Int, links: [EntityLayout.RelationshipLayout]) {
        self.leaf = leaf
        self.row = row
        self.links = links
    }
}

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

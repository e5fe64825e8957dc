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
    /// A new object with every attribute value.
    public struct Insert: Sendable, Equatable {
        /// The new object's ID.
        public var id: ObjectID
        /// One value per attribute of the entity, in schema order.
        public var values: [Value]
        /// An insert of `id` with one value per attribute of its entity, in schema order.
        public init(id: ObjectID, values: [Value]) {
            self.id = id
            self.values = values
        }
    }

    /// A new value of one attribute, with the value it replaced.
    public struct AttributeChange: Sendable, Equatable {
        /// The attribute, of the updated object's entity (`Schema.attribute(_:_:)`).
        public var attribute: AttributeKey
        /// The value before the commit.
        public var old: Value
        /// The value after the commit.
        public var new: Value
        /// A change of `attribute` from `old` to `new`.
        public init(attribute: AttributeKey, old: Value, new: Value) {
            self.attribute = attribute
            self.old = old
            self.new = new
        }
    }

    /// New values of some attributes of one stored object.
    public struct Update: Sendable, Equatable {
        /// The updated object.
        public var id: ObjectID
        /// The attributes that changed, each with its old and new value.
        public var changes: [AttributeChange]
        /// An update of `id` with these changes.
        public init(id: ObjectID, changes: [AttributeChange]) {
            self.id = id
            self.changes = changes
        }
    }

    /// One link or unlink between a source object and a target; the inverse end follows.
    public struct RelationshipEdit: Sendable, Equatable {
        /// Whether an edit adds or removes a target.
        public enum Kind: UInt8, Sendable {
            /// Adds the target (for a to-one relationship, in place of the current one).
            case link = 1
            /// Removes the target.
            case unlink = 2
            /// Puts the target at `position` of an ordered to-many relationship: inserts it there, or moves it
            /// there when the list holds it already (`previousPosition` says where it was).
            case place = 3
        }
        /// Link or unlink.
        public var kind: Kind
        /// The object whose relationship changes.
        public var source: ObjectID
        /// The relationship, of the source's entity; the inverse end is kept in step.
        public var relationship: RelationshipKey
        /// The object linked or unlinked.
        public var target: ObjectID
        /// For `place`: the target's index in the list after the edit. For a transaction's `unlink` of serial 0 from
        /// an ordered relationship: the index of the target to remove.
        public var position: Int = 0
        /// For `place`: the target's index in the list before the edit, or nil when it was not in the list.
        public var previousPosition: Int?
        /// An edit of `source`'s `relationship` (a key of the source's entity) to `target`.
        public init(_ kind: Kind, source: ObjectID, relationship: RelationshipKey, target: ObjectID) {
            self.kind = kind
            self.source = source
            self.relationship = relationship
            self.target = target
        }

        /// A `place` edit: `target` at `position` of `source`'s ordered `relationship`, where it was at
        /// `previousPosition` (nil: not in the list).
        public init(
            placing target: ObjectID, source: ObjectID, relationship: RelationshipKey, at position: Int,
            previousPosition: Int?
        ) {
            self.init(.place, source: source, relationship: relationship, target: target)
            self.position = position
            self.previousPosition = previousPosition
        }

        /// An edit of the relationship at position `index` of the source's entity.
        package init(_ kind: Kind, source: ObjectID, relationship index: Int, target: ObjectID) {
            self.init(
                kind, source: source, relationship: RelationshipKey(entity: source.entity, index: index), target: target
            )
        }
    }

    /// A deleted object, with what it held when it was deleted.
    public struct Delete: Sendable, Equatable {
        /// The deleted object.
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
        /// A delete of `id` that held these values and targets, each in schema order.
        public init(id: ObjectID, values: [Value], relationships: [[ObjectID]]) {
            self.id = id
            self.record = .given(values: values, relationships: relationships)
        }

        /// A delete that reads its values and targets from the deleted row when asked (see `DeletedRow`).
        package init(id: ObjectID, row: DeletedRow) {
            self.id = id
            self.record = .row(row)
        }

        /// Same object, values and targets, however the delete holds them.
        public static func == (a: Delete, b: Delete) -> Bool {
            a.id == b.id && a.values == b.values && a.relationships == b.relationships
        }
    }

    /// The objects inserted, in the order they were inserted.
    public var inserts: [Insert]
    /// The stored objects whose attributes changed.
    public var updates: [Update]
    /// The relationship edits, in the order they apply.
    public var edits: [RelationshipEdit]
    /// The objects deleted, cascades included.
    public var deletes: [Delete]

    /// A change set of these parts.
    public init(
        inserts: [Insert] = [], updates: [Update] = [], edits: [RelationshipEdit] = [], deletes: [Delete] = []
    ) {
        self.inserts = inserts
        self.updates = updates
        self.edits = edits
        self.deletes = deletes
    }

    /// Whether it changes nothing.
    public var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && edits.isEmpty && deletes.isEmpty }

    /// How many inserts, updates, relationship edits and deletes it holds.
    package var changeCount: Int { inserts.count + updates.count + edits.count + deletes.count }

    /// A version that commits writing fewer objects than this each replaced holds only the few nodes they copied,
    /// which the committing thread allocated: that thread drops it (the store's reclaimer and the journal's flusher
    /// hand such versions back). Freed on another thread, the nodes went back to the committing thread's heap under
    /// the heap's lock while it allocated the next commit's. A bigger commit's version is freed in the background.
    package static let freedInlineBelow = 256

    /// About how many objects it wrote: `changeCount`, plus each deleted object's targets, whose inverse links the
    /// delete removed (a nullify rule's unlinks are not listed as edits). Counting stops once it reaches `limit`.
    package func footprint(upTo limit: Int) -> Int {
        var count = changeCount
        for delete in deletes {
            if count >= limit { break }
            count += delete.record.targetCount
        }
        return count
    }
}

/// Every error Trellis throws: a code callers can match and a message that says what happened, to what.
///
/// ```swift
/// do { try store.commit(transaction) }
/// catch let error as TrellisError where error.code == .uniqueViolation { print(error.message) }
/// ```
public struct TrellisError: Error, CustomStringConvertible, Sendable, Equatable {
    /// A stable, matchable error class; extendable without breaking anyone's code.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's text, which is also how it prints (`"unique constraint violated"`).
        public let rawValue: String
        /// A code with this text; codes compare by text.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// The code's text.
        public var description: String { rawValue }

        /// A schema failed validation (a duplicate name, a relationship whose target or inverse is missing…).
        public static let invalidSchema = Code("invalid schema")
        /// No entity has that name or number in the schema.
        public static let unknownEntity = Code("unknown entity")
        /// The entity has no attribute of that name, or an attribute key belongs to another entity.
        public static let unknownAttribute = Code("unknown attribute")
        /// The entity has no relationship of that name.
        public static let unknownRelationship = Code("unknown relationship")
        /// A value does not fit the attribute's declared type, or a relationship was given an object of the wrong entity.
        public static let typeMismatch = Code("type mismatch")
        /// A commit left a required attribute null.
        public static let missingValue = Code("missing required value")
        /// A commit would give two live objects the same values in a unique index; `uniqueViolation` says which
        /// constraint, which values and which object holds them already.
        public static let uniqueViolation = Code("unique constraint violated")
        /// A delete hit a relationship whose rule is `DeleteRule.deny` and which still has targets.
        public static let deleteDenied = Code("delete denied")
        /// The object does not exist (never inserted, or deleted).
        public static let missingObject = Code("missing object")
        /// A commit left a relationship with fewer targets than its minimum or more than its maximum.
        public static let relationshipCount = Code("relationship count out of bounds")
        /// A save met conflicting changes under `MergePolicy.error`; the message lists them (see `ModelContext.conflicts()`).
        public static let conflict = Code("conflict")
        /// The store was opened read-only, or is closed.
        public static let readOnly = Code("read-only")
        /// A write or sync failed: the store stopped writing and only reads until it is reopened. The commit in
        /// flight when it failed may or may not be on disk (its message says its outcome is unknown); later ones
        /// are refused and not written.
        public static let failed = Code("store failed")
        /// A file operation failed; the message names the call, the path and the errno.
        public static let io = Code("I/O error")
        /// Stored bytes do not read as what they should be; the message names the file and offset.
        public static let corrupt = Code("corrupt")
        /// Another process has the store open for writing.
        public static let locked = Code("locked")
        /// An argument is out of range or inconsistent (a negative limit, a migration plan naming a version twice…).
        public static let invalidArgument = Code("invalid argument")
        /// A schema does not match the one an operation needs. No operation of this version throws it; code that matches it
        /// keeps compiling.
        public static let schemaMismatch = Code("schema mismatch")
        /// Loading the store would need more memory than this process can use (half of its address-space limit, or
        /// of the machine's memory); the message says how much it allowed and where it stopped. Nothing changed.
        public static let tooLarge = Code("too large")
        /// Opening with a new schema needs a migration that would lose data or that the data breaks; nothing changed.
        /// `schemaDifferences` lists how the schemas differ, each refused difference with its problem.
        public static let migrationRefused = Code("migration refused")
        /// The history asked for is older than what the store retained ("history before sequence N was compacted");
        /// `StoreOptions.history` says how much is kept.
        public static let historyCompacted = Code("history compacted")
        /// A call that waits for the store (a commit or save, `flush()`, `compact()`, `close()`, `catchUp()`) was made
        /// from inside one of that store's own observers, on the thread running it, which holds what the call would
        /// wait for (as Core Data refuses a recursive save). Nothing changed; make the call from another queue or task.
        public static let calledFromObserver = Code("called from an observer")
    }

    /// What kind of error it is, for matching.
    public let code: Code
    /// What happened, to what, for people.
    public let message: String
    /// The object the error is about, where there is one.
    public let object: ObjectID?
    /// For `.uniqueViolation`: the constraint, the values and the object that already holds them (`object` is the
    /// one that would hold them too). For `.migrationRefused` by a new unique constraint: the first duplicate found.
    public let uniqueViolation: UniqueViolation?
    /// For `.migrationRefused`: how the store's schema and the new one differ, property by property, each with both
    /// sides; the message lists them too. Empty for other errors.
    public let schemaDifferences: [SchemaDifference]

    /// An error of this code; `object` names the object it is about, if any, and the other arguments carry what a
    /// program needs to act on it (see `uniqueViolation`, `schemaDifferences`).
    public init(
        _ code: Code, _ message: String, object: ObjectID? = nil, uniqueViolation: UniqueViolation? = nil,
        schemaDifferences: [SchemaDifference] = []
    ) {
        self.code = code
        self.message = message
        self.object = object
        self.uniqueViolation = uniqueViolation
        self.schemaDifferences = schemaDifferences
    }

    /// Which unique constraint a commit (or a migration) would break, with what, and which object holds it already.
    ///
    /// ```swift
    /// catch let error as TrellisError where error.code == .uniqueViolation {
    ///     let clash = error.uniqueViolation!   // Person(email) = "ann@example.com", held by Person#3
    ///     print(clash.attributes, clash.values, clash.existing)
    /// }
    /// ```
    public struct UniqueViolation: Sendable, Equatable {
        /// The entity of the constraint.
        public let entity: String
        /// The attributes of the unique constraint, in its order.
        public let attributes: [String]
        /// The values both objects hold, one per attribute, as the store holds them (an enum's raw value).
        public let values: [Value]
        /// The object that already holds them.
        public let existing: ObjectID

        /// A violation of the constraint on `entity`(`attributes`) by `values`, which `existing` holds.
        public init(entity: String, attributes: [String], values: [Value], existing: ObjectID) {
            self.entity = entity
            self.attributes = attributes
            self.values = values
            self.existing = existing
        }
    }

    /// The code and the message: `"unique constraint violated: …"`.
    public var description: String { "\(code): \(message)" }
}

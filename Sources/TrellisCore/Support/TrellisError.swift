/// Every error Trellis throws: a code callers can match and a message that says what happened, to what.
///
/// ```swift
/// do { try store.commit(transaction) }
/// catch let error as TrellisError where error.code == .uniqueViolation { print(error.message) }
/// ```
public struct TrellisError: Error, CustomStringConvertible, Sendable, Equatable {
    /// A stable, matchable error class; extendable without breaking anyone's code.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let invalidSchema = Code("invalid schema")
        public static let unknownEntity = Code("unknown entity")
        public static let unknownAttribute = Code("unknown attribute")
        public static let unknownRelationship = Code("unknown relationship")
        public static let typeMismatch = Code("type mismatch")
        public static let missingValue = Code("missing required value")
        public static let uniqueViolation = Code("unique constraint violated")
        public static let deleteDenied = Code("delete denied")
        public static let missingObject = Code("missing object")
        public static let relationshipCount = Code("relationship count out of bounds")
        public static let conflict = Code("conflict")
        public static let readOnly = Code("read-only")
        public static let failed = Code("store failed")
        public static let io = Code("I/O error")
        public static let corrupt = Code("corrupt")
        public static let locked = Code("locked")
        public static let invalidArgument = Code("invalid argument")
        public static let schemaMismatch = Code("schema mismatch")
        /// Opening with a new schema needs a migration that would lose data or that the data breaks; nothing changed.
        public static let migrationRefused = Code("migration refused")
    }

    public let code: Code
    public let message: String
    /// The object the error is about, where there is one.
    public let object: ObjectID?

    public init(_ code: Code, _ message: String, object: ObjectID? = nil) {
        self.code = code
        self.message = message
        self.object = object
    }

    public var description: String { "\(code): \(message)" }
}

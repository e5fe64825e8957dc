/// The permanent identity of one object: its entity and a serial number allocated when it is inserted.
///
/// IDs are never temporary and never reused, so they can cross threads, be kept in a user's own data, and name an
/// object in the journal, in notifications and in the `trellis` tool.
///
/// ```swift
/// let id = try transaction.insert("Folder", ["name": "Inbox"])
/// print(id.description(in: store.schema))   // Folder#1
/// print(id)                                 // 0#1: an ID alone knows its entity's number, not its name
/// ```
public struct ObjectID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The entity's position in the store's schema.
    public let entity: UInt32
    /// The object's serial number within its entity; the first object of an entity gets 1.
    public let serial: UInt64

    /// The ID of the object with this serial in the entity with this number (see `entity`).
    @inlinable public init(entity: UInt32, serial: UInt64) {
        self.entity = entity
        self.serial = serial
    }

    /// Orders by entity number, then serial: the order of `Snapshot.objectIDs(entity:)` and of the journal.
    @inlinable public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool {
        (lhs.entity, lhs.serial) < (rhs.entity, rhs.serial)
    }

    /// `entity#serial`, with the entity's number: `0#12`. With a schema at hand, `description(in:)` gives its name:
    /// `Folder#12`; Trellis's errors and a model's `debugDescription` name objects that way.
    public var description: String { "\(entity)#\(serial)" }
}

/// The permanent identity of one object: its entity and a serial number allocated when it is inserted.
///
/// IDs are never temporary and never reused, so they can cross threads, be kept in a user's own data, and name an
/// object in the journal, in notifications and in the `trellis` tool.
///
/// ```swift
/// let id = try transaction.insert("Folder", ["name": "Inbox"])
/// print(id)   // Folder#1
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

    /// `entity#serial`, with the entity's number (`Schema.describe(_:)` gives its name: `Folder#12`).
    public var description: String { "\(entity)#\(serial)" }
}

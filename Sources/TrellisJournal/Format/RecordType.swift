/// The kind of a framed record. The high bit marks a type a reader may skip when it does not know it.
package enum RecordType: UInt8 {
    case changeSet = 1
    case checkpointRows = 2
    case checkpointFooter = 3
    /// Format version 2: a checkpoint chunk stored column by column (`CheckpointColumns`).
    case checkpointColumns = 4
    /// Format version 3: the order of one index of a checkpoint's entity (`CheckpointIndexOrder`).
    case checkpointIndexOrder = 5
    /// Format version 4: a schema migration, the first record of a segment whose header holds the new schema
    /// (`MigrationRecord`).
    case migration = 6

    static let ignorableBit: UInt8 = 0x80
}

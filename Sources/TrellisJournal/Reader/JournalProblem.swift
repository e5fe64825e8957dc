import TrellisCore
import TrellisGraph

/// A piece of damage found in a store directory, classified, with the file and byte offset where it starts.
///
/// The journal reader reports problems; what to do about them (stop, drop a torn tail, skip) is the caller's policy
/// (`StoreOptions.Recovery`, or the `trellis` tool).
///
/// ```swift
/// for problem in try JournalReader(directory: url).verify().problems {
///     print(problem)   // segment-0000000000000002.trj at 4096: checksum: …
/// }
/// ```
public struct JournalProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The class of the damage.
    public enum Kind: String, Sendable, CaseIterable {
        /// The last segment ends in a partial or damaged record with nothing valid after it: what a crash during an
        /// append leaves. Recovery drops (and backs up) these bytes by default.
        case tornTail = "torn tail"
        /// Damage in the last segment (format version 6 on) followed by valid records that were all written before
        /// the first record missing at the damage was durable (their synced-through watermarks say so), and after
        /// the manifest's durable sequence: what a power cut leaves when a later sector of an unsynced batch reached
        /// the disk and an earlier one did not. Nothing from the damage on was acknowledged; `.pointInTime` recovery
        /// drops it (and backs it up) like a torn tail, other policies refuse it.
        case unacknowledgedHole = "unacknowledged hole"
        /// A record's checksum does not match its bytes.
        case checksum
        /// The last record of the last segment is whole but fails its checksum with no sign of a torn write (one
        /// flipped bit, or damage with no zero sector and a non-zero last byte): its bytes changed after they were
        /// written. Not a crash artefact; refused unless salvaging.
        case rot
        /// The journal ends before the last record the manifest says was durable (written at clean close, rotation,
        /// compaction and migration): records vanished from its end (zeroed or cut off at a record boundary).
        case vanishedTail = "vanished tail"
        /// A length that cannot be right: larger than the maximum record size or than the bytes left in the file.
        case length
        /// A run of zero bytes where a record should start (preallocated or zeroed space).
        case zeroed
        /// A record whose sequence number is not the previous one + 1, or a segment that does not continue where the
        /// one before ended.
        case sequenceGap = "sequence gap"
        /// A record that checks out only under another file's salt: a stale frame from somewhere else.
        case salt
        /// A record type or codec this build does not know and may not skip.
        case unknownType = "unknown type"
        /// A file the manifest names is not there.
        case missingFile = "missing file"
        /// A store file that the manifest does not reference.
        case orphanFile = "orphan file"
        /// A file header (magic, version, checksum) that does not check out.
        case header
        /// The manifest is missing, truncated or fails its checksum.
        case manifest
        /// A record whose bytes check out but do not decode, or do not apply to the graph.
        case decode
        /// A record that applies, but whose history contradicts the state it applies to: an update's old value is
        /// not the value the object holds, or a deleted object's values or targets are not its own. Found by
        /// `JournalReader.verify()` only. Recovery rebuilds the same state without it, so the store opens; history
        /// and undo would repeat a story the store never lived. Compacting drops the records and their history
        /// (`repair` keeps what recovery accepts, so it cannot).
        case history
        /// The file was written with a different schema.
        case schema
    }

    /// The class of the damage.
    public var kind: Kind
    /// The file's name within the store directory.
    public var file: String
    /// The byte offset in `file` where the damage starts.
    public var offset: Int
    /// What exactly is wrong, for people.
    public var message: String

    package init(_ kind: Kind, file: String, offset: Int, _ message: String) {
        self.kind = kind
        self.file = file
        self.offset = offset
        self.message = message
    }

    /// `file at offset N: kind: message`.
    public var description: String { "\(file) at offset \(offset): \(kind.rawValue): \(message)" }
}

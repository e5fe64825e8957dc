import TrellisCore

/// What `JournalReader.verify()` found.
public struct JournalVerification: Sendable {
    /// Every problem, classified, with file and offset; empty for a healthy store.
    public var problems: [JournalProblem]
    /// The sequence number of the checkpoint (0: none).
    public var checkpointSequence: UInt64
    /// Change-set records that checked out and applied.
    public var records: Int
    /// The last sequence number a recovery would reach (with `.salvage`, when there are problems).
    public var lastSequence: UInt64
    /// The objects per entity name of the recovered graph.
    public var objectCounts: [String: Int]
    /// Whether no problem was found.
    public var isClean: Bool { problems.isEmpty }
}

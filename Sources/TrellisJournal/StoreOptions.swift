import Foundation
import TrellisCore
import TrellisGraph

/// How a directory store is opened: durability, recovery policy, read-only access, compaction.
///
/// ```swift
/// let store = try Store(directory: url, schema: schema,
///                       options: StoreOptions(durability: .interval(1), recovery: .strict))
/// ```
public struct StoreOptions: Sendable {
    /// When a commit reaches the disk.
    ///
    /// The default is `.perCommit`: a commit returns only after its record is synced, and readers never see a commit
    /// that a crash could take back — what Core Data and SQLite (`synchronous=FULL`) users expect from "saved".
    /// Group commit makes concurrent commits share one sync, so the price falls mostly on a single thread committing
    /// many tiny transactions, which can choose `.interval`.
    public enum Durability: Sendable, Equatable {
        /// `commit` returns after its record is synced; concurrent commits share one sync; a commit is published to
        /// readers only once durable.
        case perCommit
        /// Commits are published at once and written promptly; a sync runs at most this many seconds after a
        /// write. A crash loses at most about that window (a process crash loses nothing already written).
        case interval(Double)
        /// Commits are published at once and written promptly; syncs happen only on `flush()`, `close()`,
        /// rotation and compaction. A power cut can lose any commit since the last of those.
        case none
    }

    /// What opening a store does with damage it finds (RocksDB calls these WAL recovery modes).
    public enum Recovery: Sendable, Equatable {
        /// Refuse any damage, a torn tail included.
        case strict
        /// Drop a torn tail of the last segment (backing the bytes up to a file, reported in `RecoveryReport`);
        /// refuse any other damage. The default: a torn tail is what a crash during an append leaves, and it holds
        /// no acknowledged commit.
        case tolerateTornTail
        /// Everything `.tolerateTornTail` does, and also drop an unacknowledged hole (RocksDB's point-in-time
        /// recovery): damage in the last segment followed by valid records whose synced-through watermarks (format
        /// version 6) all say they were written before the first record missing at the damage was durable, after
        /// the manifest's durable sequence. What a power cut leaves when a later sector of an unsynced batch reached
        /// the disk and an earlier one did not: the longest valid prefix is kept, the rest backed up and truncated
        /// as a torn tail is (`RecoveryReport.hole`). A valid record after the damage whose watermark proves that
        /// the lost records were acknowledged refuses the open, and so does a hole in a segment of version 5 or
        /// earlier (no watermarks). Not the default: a hole also means the disk reordered writes, which an
        /// application may want to hear about before it opens.
        case pointInTime
        /// Skip damaged records and records that no longer apply, keep the rest, and rewrite the store as a fresh
        /// checkpoint (damaged segments are kept as `*.damaged` files). Reports what was skipped.
        case salvage
    }

    /// When compaction runs by itself: once the journal since the last checkpoint is both larger than
    /// `minimumJournalBytes` and larger than `journalToCheckpointRatio` times the checkpoint, and, with `atClose`, at a
    /// clean close. An open loads the checkpoint and replays the journal, and a journal byte replays about four times
    /// slower than a checkpoint byte loads; the default ratio (a quarter) keeps the open of a store whose process was
    /// killed within about twice the cost of loading its checkpoint, and disk use within about 1.25 times the
    /// checkpoint, while the minimum keeps small stores from compacting often. The checkpoint is written on a thread of
    /// the lowest priority, which takes only the time commits and reads leave idle, and never blocks a commit.
    public struct Compaction: Sendable, Equatable {
        /// Whether compaction starts by itself after commits and at close (otherwise only `Store.compact()` runs
        /// it).
        public var automatic: Bool
        /// The journal size below which compaction never starts by itself after a commit.
        public var minimumJournalBytes: Int
        /// How many times the checkpoint's size the journal must reach before compaction starts by itself.
        public var journalToCheckpointRatio: Double
        /// Whether `Store.close()` compacts first when the journal is at least a sixteenth of the checkpoint and at
        /// least 256 KiB, so that the next launch loads a checkpoint and replays almost nothing (SQLite's last
        /// connection checkpoints its write-ahead log at close in the same way). The close takes as long as
        /// `Store.compact()` would; with `automatic` off it never compacts. Off by default: a close that compacts
        /// removes the journal's records, which a replica's or a tool's reader of the journal may still want.
        public var atClose: Bool

        /// Automatic compaction once the journal passes both the minimum (4 MiB by default) and the ratio (a quarter of
        /// the checkpoint); at close only when asked.
        public init(
            automatic: Bool = true, minimumJournalBytes: Int = 4 << 20, journalToCheckpointRatio: Double = 0.25,
            atClose: Bool = false
        ) {
            self.automatic = automatic
            self.minimumJournalBytes = minimumJournalBytes
            self.journalToCheckpointRatio = journalToCheckpointRatio
            self.atClose = atClose
        }

        /// Only `Store.compact()` compacts.
        public static let manual = Compaction(automatic: false)
    }

    /// When a commit reaches the disk; `.perCommit` by default.
    public var durability: Durability
    /// What opening does with damage; `.tolerateTornTail` by default.
    public var recovery: Recovery
    /// Open without the writer lock and without changing any file; commits throw `.readOnly`.
    public var readOnly: Bool
    /// Open as a follower of the process that writes the store (implies `readOnly`): the store shows every commit
    /// the writer made durable, in order, one version per commit, through the same path as its own commits
    /// (`Store.observe(_:)`, the view context, live results), and never one that is not durable yet. See
    /// `Store.catchUp()` and the article "Following a Store from Another Process".
    public var follow: Bool
    /// How often a follower looks for new commits when it is not notified of them (no inotify: not Linux, or the
    /// system's watch limit reached). With notifications it also looks at least once a second.
    public var followPollInterval: Double
    /// When compaction runs by itself.
    public var compaction: Compaction
    /// A segment is closed and a new one started once it grows past this size.
    public var segmentBytes: Int
    /// zlib level for journal records (1: fastest, 9: smallest). Records are written on the commit path, so the
    /// default favours speed; checkpoints, written in the background, use 6. At level 1 with `.perCommit` durability,
    /// a record of 16 KiB or more is stored deflated only when Huffman coding halves it (64 KiB or more at other levels
    /// and durabilities): the save waits for it, and deflating it takes longer than writing the bytes it would save.
    /// Choose 2 or more to keep such records deflated at the cost of that time.
    public var compressionLevel: Int
    /// Where a writable open backs up the bytes it drops from the end of the last segment (a torn tail, or an
    /// unacknowledged hole under `.pointInTime`) before it truncates them: nil (the default) is the store's own
    /// directory. Point it at another disk when the store's is full: dropping a tail needs room for its backup.
    public var tailBackupDirectory: URL?
    /// How much history compaction keeps (`Store.history(since:)`, `Store.snapshot(asOf:)`); `.none` by default:
    /// the records since the last checkpoint, at no cost.
    public var history: HistoryRetention = .none

    /// The file layer all I/O goes through (tests put a fault-injecting one here).
    package var fileLayer: any FileLayer = PosixFileLayer()
    /// Whether a follower asks to be notified of changes (inotify); tests turn it off to try the timer.
    package var followNotifications = true
    /// The payload bytes of each frame of a record too big for one (format version 10; at least 64). Tests make it a
    /// few hundred bytes so that small commits span many frames; so does the environment variable
    /// `TRELLIS_TEST_FRAGMENT_BYTES`, for child processes the tests start.
    package var fragmentBytes = StoreOptions.environmentFragmentBytes ?? JournalFormat.defaultFragmentBytes
    /// `TRELLIS_TEST_FRAGMENT_BYTES`, when set to a number of at least 64.
    static let environmentFragmentBytes: Int? = {
        guard let text = ProcessInfo.processInfo.environment["TRELLIS_TEST_FRAGMENT_BYTES"], let n = Int(text), n >= 64
        else { return nil }
        return n
    }()
    /// Runs after each checkpoint chunk is written (tests use it to hold a compaction open).
    var checkpointChunkHook: (@Sendable () -> Void)?

    /// Options with these values. The defaults: durable per commit, a torn tail dropped, read-write, automatic
    /// compaction, 64 MiB segments, zlib level 1.
    public init(
        durability: Durability = .perCommit, recovery: Recovery = .tolerateTornTail, readOnly: Bool = false,
        compaction: Compaction = Compaction(), segmentBytes: Int = 64 << 20, compressionLevel: Int = 1,
        tailBackupDirectory: URL? = nil, follow: Bool = false, followPollInterval: Double = 0.05
    ) {
        self.tailBackupDirectory = tailBackupDirectory
        self.follow = follow
        self.followPollInterval = followPollInterval
        self.durability = durability
        self.recovery = recovery
        self.readOnly = readOnly || follow
        self.compaction = compaction
        self.segmentBytes = segmentBytes
        self.compressionLevel = compressionLevel
    }

    /// Options for a follower in another process than the writer (an app extension, a widget, a tool): read-only,
    /// following every durable commit.
    ///
    /// ```swift
    /// let store = try Store(directory: url, schema: schema, options: .follower)
    /// ```
    public static var follower: StoreOptions { StoreOptions(readOnly: true, follow: true) }
}

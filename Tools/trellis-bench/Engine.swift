/// What each engine does for the workload. The steps time these calls and compare what they return, so an engine
/// only does the work; it never times itself (except where a reader thread must, see `ReadProbe`).
protocol BenchEngine: AnyObject {
    var name: String { get }
    /// Marks figures that are not yet what the workload asks for (Trellis before its journal lands).
    var caveat: String? { get }

    /// Durability of the following commits.
    func setDurability(_ durability: Durability) throws

    /// W1, S1: inserts `items` in one transaction.
    func insertItems(_ items: ArraySlice<ItemData>) throws
    /// W10: inserts items 0 ..< count in one transaction straight from the generator, never holding them all.
    func insertGenerated(_ count: Int) throws
    /// W2, W8, S1: reads every attribute of every `Item`.
    func fetchAll() throws -> FetchSummary
    /// W3a: fetches each id through the unique index and reads its title.
    func lookupTitles(_ ids: [Int64]) throws -> LookupSummary
    /// W3b: each range through the score index, in score order.
    func rangeQueries(_ ranges: [ScoreRange]) throws -> RangeSummary
    /// W3b index-only: the same ranges answered by an index that holds both score and id, reading no rows.
    func rangeQueriesIndexOnly(_ ranges: [ScoreRange]) throws -> RangeSummary
    /// Before and after the index-only ranges, untimed: an engine whose index on score does not hold the id makes
    /// one that does, and drops it after.
    func prepareIndexOnlyRanges() throws
    func finishIndexOnlyRanges() throws
    /// W4, W7, S1: `score += 1` on every `Item`, in one transaction.
    func incrementScores() throws
    /// W5, X1: one transaction per item.
    func insertEach(_ items: ArraySlice<ItemData>) throws
    func itemCount() throws -> Int

    /// W6 setup: a `Folder` tree with `fanOut` children per folder and `depth` levels below the root.
    func buildFolderTree(fanOut: Int, depth: Int) throws
    /// W6: deletes the root; the cascade takes the rest.
    func deleteRootFolder() throws
    func folderCount() throws -> Int

    /// W7: makes a reader for another thread; it opens whatever it needs there.
    func readerFactory() -> @Sendable () throws -> any ReadProbe

    /// W8, W10: closes the store; only `open()` may be called after.
    func close() throws
    /// W8: opens the store again after `close()`; false when the engine cannot (an in-memory store, which then
    /// stays as it was).
    func open() throws -> Bool
    /// W8, W9: compaction (SQLite: VACUUM); false when the engine has nothing to compact.
    func compact() throws -> Bool
    /// W9: bytes under the store's directory; nil when the store is not on disk.
    func bytesOnDisk() -> Int?
    /// X1: nanoseconds to take one read snapshot; nil when the engine has no such operation.
    func snapshotTakeNanoseconds(iterations: Int) -> Double?
}

enum Durability {
    /// Durable when the commit returns (fsync; SQLite `synchronous=FULL`).
    case perCommit
    /// Group commit (SQLite `synchronous=NORMAL` in WAL mode).
    case relaxed
}

/// A reader on its own thread (W7): one connection or snapshot source, queried again and again.
protocol ReadProbe {
    /// The number of items whose flag is true.
    func countFlagged() throws -> Int
    /// The UTF-8 length of one item's title, found by unique id (-1 when missing).
    func titleLength(id: Int64) throws -> Int
}

/// What a fetch of every item saw: enough sums that skipping an attribute or a row shows.
struct FetchSummary: Equatable {
    var count = 0
    var idSum: Int64 = 0
    var titleBytes = 0
    var scoreSum = 0.0
    var flagged = 0
    var createdSum = 0.0
    var n1Sum: Int64 = 0
    /// n2 … n5, wrapping sums folded together.
    var otherSum: Int64 = 0
}

struct LookupSummary: Equatable {
    var found = 0
    var titleBytes = 0
}

struct RangeSummary: Equatable {
    var rows = 0
    var scoreSum = 0.0
    var idSum: Int64 = 0
    /// Rows that came before a lower score: must stay 0.
    var outOfOrder = 0
}

extension BenchEngine {
    func prepareIndexOnlyRanges() throws {}
    func finishIndexOnlyRanges() throws {}
}

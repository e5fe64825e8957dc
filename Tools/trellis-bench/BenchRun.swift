import Foundation

/// One run of the whole workload: both engines, every selected step, engines alternating which goes first.
final class BenchRun {
    let options: Options
    /// This run's temp directory (under /tmp); removed by the caller.
    let root: String
    let model: TrellisModel
    var figures = FigureSet()
    var checks = Checks()
    /// Items 0 ..< N + 2 × W5 commits (and at least the 1,000 S1 uses).
    let items: [ItemData]
    private(set) var turn = 0

    var n: Int { options.itemCount }
    /// Commits in each half of W5 (10,000 at scale 1).
    var smallCommits: Int { max(100, Int((10_000 * options.scale).rounded())) }
    /// W6's tree depth: 5 levels below the root at scale 1 (111,111 folders), one fewer per tenth.
    var folderDepth: Int { min(7, max(1, 5 + Int(log10(options.scale).rounded()))) }

    init(options: Options, root: String, model: TrellisModel) {
        self.options = options
        self.root = root
        self.model = model
        let count = max(options.itemCount + 2 * max(100, Int((10_000 * options.scale).rounded())), 1000)
        items = ItemGenerator.items(count)
    }

    func directory(_ name: String) -> String { (root as NSString).appendingPathComponent(name) }

    /// Runs `body` for both engines, Trellis first on even turns and SQLite first on odd ones, so that neither
    /// always inherits the other's warm caches or leftover work.
    func both<T>(
        _ t: any BenchEngine, _ s: any BenchEngine, _ body: (any BenchEngine) throws -> T
    ) throws -> (
        trellis: T, sqlite: T
    ) {
        if nextTrellisFirst() {
            let a = try body(t)
            return (a, try body(s))
        }
        let b = try body(s)
        return (try body(t), b)
    }

    /// Whether Trellis goes first in the next step; flips every call.
    func nextTrellisFirst() -> Bool {
        turn += 1
        return turn % 2 == 1
    }

    /// Runs `body` for both engines and times it, in milliseconds.
    func timeBoth(
        _ t: any BenchEngine, _ s: any BenchEngine, _ body: (any BenchEngine) throws -> Void
    ) throws -> (
        trellis: Double, sqlite: Double
    ) {
        try both(t, s) { engine in
            // Each engine's step starts with nothing left for the disk to write back: without this, whichever engine
            // ran second paid for the first one's dirty pages (W1 moved between 36 and 63 ms from run to run).
            sync()
            return try Measure.milliseconds { try body(engine) }.1
        }
    }

    func progress(_ message: String) {
        FileHandle.standardError.write(Data("  … \(message)\n".utf8))
    }

    /// The whole workload, in the order the steps depend on each other.
    func run() throws {
        let core: Set = ["W1", "W2", "W3a", "W3b", "W4", "W5a", "W5b", "W6", "W7", "W8", "W9"]
        if !options.only.isDisjoint(with: core) {
            let trellis = try TrellisEngine(directory: directory("trellis"), model: model)
            let sqlite = try SQLiteEngine(directory: directory("sqlite"))
            let lmdb = try LMDBEngine(directory: directory("lmdb"))
            try runCore(trellis, sqlite, lmdb)
        }
        if options.wants("W10") { try runMemory() }
        if options.wants("S1") { try runSeed() }
        if options.wants("S2") { try runStructured() }
        if options.wants("X1") { try runScaling() }
        if options.wants("M1") { try runMigration() }
        if options.wants("L1") { try runLive() }
        if options.wants("F1") { try runFollow() }
        if options.wants("H1") { try runHistory() }
        if options.wants("R1") { try runReplication() }
    }

    private func runCore(_ t: TrellisEngine, _ s: SQLiteEngine, _ l: LMDBEngine) throws {
        try runInsert(t, s, l)
        if options.wants("W2") { try runFetchAll(t, s, l) }
        if options.wants("W3a") { try runLookups(t, s, l) }
        if options.wants("W3b") { try runRanges(t, s, l) }
        if options.wantsAny("W4", "W9") { try runUpdate(t, s, l) }
        if options.wants("W7") { try runReadWhileWrite(t, s, l) }
        if options.wantsAny("W5a", "W5b") { try runSmallCommits(t, s, l) }
        if options.wants("W6") { try runCascadeDelete(t, s, l) }
        if options.wantsAny("W8", "W9") { try runReopenAndCompaction(t, s, l) }
    }
}

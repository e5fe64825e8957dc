import Foundation
import Trellis

/// Trellis through its public API, as an app would use it: transactions, snapshots, rows, index lookups and scans.
final class TrellisEngine: BenchEngine {
    let name = "Trellis"
    var caveat: String? { TrellisStorage.caveat }
    let directory: String
    let model: TrellisModel
    /// The open store; nil between `close()` and `open()`, so that a closed store's memory is freed when it closes
    /// (as SQLite's engine drops its connection), not inside the timed reopen.
    private var current: Store?
    private var store: Store { current! }
    private var durability = Durability.perCommit
    private var rootFolder: ObjectID?
    /// Keeps the snapshot loop's result observable so the compiler cannot drop it.
    private(set) var sink: UInt64 = 0

    init(directory: String, model: TrellisModel) throws {
        self.directory = directory
        self.model = model
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        current = try TrellisStorage.open(directory: directory, model: model, durability: durability)
    }

    /// Durability is an option of the open store, so changing it closes and reopens the store (untimed).
    func setDurability(_ durability: Durability) throws {
        guard durability != self.durability else { return }
        self.durability = durability
        guard TrellisStorage.isPersistent else { return }
        try TrellisStorage.close(store)
        current = nil
        current = try TrellisStorage.open(directory: directory, model: model, durability: durability)
    }

    func insertItems(_ items: ArraySlice<ItemData>) throws {
        var tx = store.transaction()
        for item in items { tx.insert(entity: model.item, row: model.row(item)) }
        try store.commit(tx)
    }

    func insertGenerated(_ count: Int) throws {
        var tx = store.transaction()
        var generator = ItemGenerator()
        for _ in 0..<count { tx.insert(entity: model.item, row: model.row(generator.next()!)) }
        try store.commit(tx)
    }

    func fetchAll() throws -> FetchSummary { try Self.fetchAll(store.snapshot, model) }

    static func fetchAll(_ snapshot: Snapshot, _ m: TrellisModel) throws -> FetchSummary {
        var sum = FetchSummary()
        for row in snapshot.rows(entity: m.item) {
            let id = row.int(m.id) ?? 0
            let title = row.string(m.title) ?? ""
            let score = row.double(m.score) ?? 0
            let flag = row.bool(m.flag) ?? false
            let created = row.date(m.created) ?? .distantPast
            sum.count += 1
            sum.idSum &+= id
            sum.titleBytes += title.utf8.count
            sum.scoreSum += score
            sum.flagged += flag ? 1 : 0
            sum.createdSum += created.timeIntervalSince1970
            sum.n1Sum &+= row.int(m.n1) ?? 0
            sum.otherSum &+=
                (row.int(m.n2) ?? 0) &+ (row.int(m.n3) ?? 0) &+ (row.int(m.n4) ?? 0) &+ (row.int(m.n5) ?? 0)
        }
        return sum
    }

    func lookupTitles(_ ids: [Int64]) throws -> LookupSummary {
        var sum = LookupSummary()
        for id in ids {
            // A snapshot per fetch, as SQLite reads each statement in its own transaction.
            let snapshot = store.snapshot
            guard let id = snapshot.lookup(model.idIndex, .int(id)),
                let title = snapshot.object(id)?.string(model.title)
            else { continue }
            sum.found += 1
            sum.titleBytes += title.utf8.count
        }
        return sum
    }

    func rangeQueries(_ ranges: [ScoreRange]) throws -> RangeSummary {
        var sum = RangeSummary()
        for range in ranges {
            let snapshot = store.snapshot
            let rows = snapshot.rows(
                model.scoreIndex, from: [.double(range.lower)], inclusive: true, to: [.double(range.upper)],
                inclusive: false)
            var last = -Double.infinity
            rows.forEach(reading: [model.score, model.id]) { object in
                let score = object.double(model.score) ?? .nan
                sum.rows += 1
                sum.idSum &+= object.int(model.id) ?? 0
                sum.scoreSum += score
                if score < last { sum.outOfOrder += 1 }
                last = score
            }
        }
        return sum
    }

    /// Reads score and id from the (score, id) index's entries, without the rows.
    func rangeQueriesIndexOnly(_ ranges: [ScoreRange]) throws -> RangeSummary {
        var sum = RangeSummary()
        for range in ranges {
            let snapshot = store.snapshot
            var last = -Double.infinity
            snapshot.forEachEntry(
                model.scoreIndex, from: [.double(range.lower)], inclusive: true, to: [.double(range.upper)],
                inclusive: false
            ) { entry in
                let score = entry.double(0) ?? .nan
                sum.rows += 1
                sum.idSum &+= entry.int(1) ?? 0
                sum.scoreSum += score
                if score < last { sum.outOfOrder += 1 }
                last = score
            }
        }
        return sum
    }

    func incrementScores() throws {
        let snapshot = store.snapshot
        var tx = store.transaction()
        for row in snapshot.rows(entity: model.item) {
            try tx.set(row.id, model.score, .double((row.double(model.score) ?? 0) + 1))
        }
        try store.commit(tx)
    }

    func insertEach(_ items: ArraySlice<ItemData>) throws {
        for item in items {
            var tx = store.transaction()
            tx.insert(entity: model.item, row: model.row(item))
            try store.commit(tx)
        }
    }

    func itemCount() throws -> Int { store.snapshot.count(entity: model.item) }

    func buildFolderTree(fanOut: Int, depth: Int) throws {
        let tree = FolderTree(fanOut: fanOut, depth: depth)
        var ids: [ObjectID] = []
        ids.reserveCapacity(tree.count)
        var tx = store.transaction()
        for folder in tree {
            let id = tx.insert(entity: model.folder, row: [.string(folder.name)])
            ids.append(id)
            if let parent = folder.parent { try tx.link(id, "parent", ids[parent - 1]) }
        }
        try store.commit(tx)
        rootFolder = ids.first
    }

    func deleteRootFolder() throws {
        guard let root = rootFolder else { return }
        var tx = store.transaction()
        try tx.delete(root)
        try store.commit(tx)
        rootFolder = nil
    }

    func folderCount() throws -> Int { store.snapshot.count(entity: model.folder) }

    func readerFactory() -> @Sendable () throws -> any ReadProbe {
        let store = self.store
        let model = self.model
        return { TrellisReadProbe(store: store, model: model) }
    }

    func open() throws -> Bool {
        guard TrellisStorage.isPersistent else { return false }
        current = try TrellisStorage.open(directory: directory, model: model, durability: durability)
        return true
    }

    func close() throws {
        try TrellisStorage.close(store)
        current = nil
    }

    func compact() throws -> Bool { try TrellisStorage.compact(store) }

    func bytesOnDisk() -> Int? { TrellisStorage.bytesOnDisk(store, directory: directory) }

    /// W8: copies the store's files as a process killed now would leave them (taken once no compaction runs, so that
    /// the copy is of one moment), for `openCopyAndFetchAll`. Returns the copy's directory.
    func copyAsIfKilled() throws -> String {
        store.waitForCompaction()
        let copy = directory + "-killed"
        // The store prepares its next segment in the background (written as `.tmp`, renamed, then named in the
        // manifest): a copy taken across those steps is of no one moment (or fails on the renamed file). It is taken
        // again until the directory's names, sizes and modification times are the same before and after it.
        func listing() -> [String: String] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            var files: [String: String] = [:]
            for name in names {
                let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)
                let size = (attributes?[.size] as? NSNumber)?.intValue ?? -1
                let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? -1
                files[name] = "\(size) \(modified)"
            }
            return files
        }
        for attempt in 1...20 {
            try? FileManager.default.removeItem(atPath: copy)
            let before = listing()
            do {
                try FileManager.default.copyItem(atPath: directory, toPath: copy)
                if listing() == before { return copy }
            } catch {
                if attempt == 20 { throw error }
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        throw BenchFailure("W8: the store's files kept changing while they were copied")
    }

    /// W8: opens the copy `copyAsIfKilled` made (a kill leaves no clean close, so no compaction at close) and fetches
    /// every item; returns the summary and the milliseconds to it. The copy is closed and removed after.
    func openCopyAndFetchAll(_ copy: String) throws -> (FetchSummary, Double) {
        let start = Measure.now()
        let opened = try TrellisStorage.open(
            directory: copy, model: model, durability: durability, compactsAtClose: false)
        let summary = try TrellisEngine.fetchAll(opened.snapshot, model)
        let ms = Double(Measure.now() - start) / 1e6
        try opened.close()
        try? FileManager.default.removeItem(atPath: copy)
        return (summary, ms)
    }

    func snapshotTakeNanoseconds(iterations: Int) -> Double? {
        var total: UInt64 = 0
        let start = Measure.now()
        for _ in 0..<iterations { total &+= store.snapshot.sequence }
        let elapsed = Measure.now() - start
        sink &+= total
        return Double(elapsed) / Double(max(iterations, 1))
    }
}

/// The W7 reader: takes a fresh snapshot for every query, as a view that follows commits would.
struct TrellisReadProbe: ReadProbe {
    let store: Store
    let model: TrellisModel

    /// `count(Item where flag == true)` through the query planner, as an app would ask it.
    static let flagged = DynamicQuery("Item", where: .equal("flag", true))

    func countFlagged() throws -> Int {
        try store.snapshot.count(Self.flagged)
    }

    func titleLength(id: Int64) throws -> Int {
        let snapshot = store.snapshot
        guard let id = snapshot.lookup(model.idIndex, .int(id)),
            let title = snapshot.object(id)?.string(model.title)
        else { return -1 }
        return title.utf8.count
    }
}

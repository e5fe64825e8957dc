import Dispatch
import Foundation
import Synchronization
import Trellis

/// L1's model: items sorted by a key within sections.
final class LiveItem: Model {
    @Attribute var section = 0
    @Attribute var key = 0.0
    @Attribute var title = ""
}

/// L1: a live, sectioned result over N items (100,000 at scale 1) sorted by a key; 1,000 one-item commits from
/// another thread move items within and across sections. Measured: from `save()` returning to the result's change
/// delivered on the main thread, against what an app writes without one (refresh the view context, fetch the IDs
/// again, `CollectionDifference` against the previous fetch) over 100 more such commits, in the same run on the same
/// store. The peer column is that baseline, not SQLite.
extension BenchRun {
    func runLive() throws {
        let count = n
        let commits = 1_000
        progress("L1 live result over \(count) items, \(commits) one-item commits")
        let dir = directory("l1")
        let store = try Store(
            directory: URL(fileURLWithPath: dir), models: [LiveItem.self],
            options: StoreOptions(durability: .interval(1), compaction: .manual))
        var random = SeededRandom(seed: 0x4C31)
        var ids: [ObjectID] = []
        let seed = ModelContext(store)
        for i in 0..<count {
            let item = LiveItem()
            item.section = i % 20
            item.key = Double(random.next() % 1_000_000)
            item.title = "item \(i)"
            seed.insert(item)
            ids.append(item.objectID!)
        }
        try seed.save()
        // The same moves for both: a new key, and every fourth commit a new section.
        let moves = (0..<(2 * commits)).map { i in
            (
                ids[Int(random.next() % UInt64(ids.count))], Double(random.next() % 1_000_000),
                i % 4 == 0 ? Int(random.next() % 20) : nil
            )
        }
        let (live, correct) = try MainActor.assumeIsolated {
            try Self.measureLive(store, moves: moves[0..<commits])
        }
        // The baseline refetches every item each time (about 0.3 s a commit at scale 1): a tenth as many commits.
        let baselineTimes = try MainActor.assumeIsolated {
            try Self.measureBaseline(store, moves: moves[commits..<(commits + commits / 10)])
        }
        checks.expect("L1", correct, "the live result differs from a fresh fetch after the commits")
        try store.close()
        try? FileManager.default.removeItem(atPath: dir)
        let p = { (values: [Double], q: Double) in Measure.quantile(values, q) }
        figures.add(
            "L1", "delivery_p50_us", "µs", .lower, trellis: p(live, 0.5), sqlite: p(baselineTimes, 0.5),
            peer: "refetch + CollectionDifference")
        figures.add(
            "L1", "delivery_p99_us", "µs", .lower, trellis: p(live, 0.99), sqlite: p(baselineTimes, 0.99),
            peer: "refetch + CollectionDifference")
    }

    /// The descriptor both sides follow.
    static var liveDescriptor: FetchDescriptor<LiveItem> {
        FetchDescriptor<LiveItem>(sortBy: [SortDescriptor(\.section), SortDescriptor(\.key)])
    }

    /// Commits `moves` from another thread, one at a time; `deliver` runs on the main thread after each and returns
    /// when the change is on screen. Returns the microseconds from `save()` returning to `deliver` returning.
    @MainActor
    static func drive(
        _ store: Store, _ moves: ArraySlice<(ObjectID, Double, Int?)>, deliver: () throws -> Void
    ) throws -> [Double] {
        let saved = Atomic<UInt64>(0)
        let committed = DispatchSemaphore(value: 0)
        let shown = DispatchSemaphore(value: 0)
        let failed = Atomic<Bool>(false)
        let work = Array(moves)
        let writer = Thread {
            let context = ModelContext(store)
            for (id, key, section) in work {
                do {
                    guard let item = context.model(for: id, as: LiveItem.self) else {
                        throw CocoaError(.coderValueNotFound)
                    }
                    item.key = key
                    if let section { item.section = section }
                    try context.save()
                } catch {
                    failed.store(true, ordering: .releasing)
                }
                saved.store(Measure.now(), ordering: .releasing)
                committed.signal()
                shown.wait()
            }
        }
        writer.start()
        var micros: [Double] = []
        for _ in work {
            committed.wait()
            try deliver()
            let now = Measure.now()
            micros.append(Double(now - saved.load(ordering: .acquiring)) / 1_000)
            shown.signal()
        }
        if failed.load(ordering: .acquiring) { throw BenchError("a commit of the writer thread failed") }
        return micros
    }

    @MainActor
    static func measureLive(_ store: Store, moves: ArraySlice<(ObjectID, Double, Int?)>) throws -> ([Double], Bool) {
        let view = store.viewContext
        view.refresh()
        let live = try FetchedResultsController(liveDescriptor, sectionBy: \.section, context: view)
        var delivered = 0
        let token = live.onChange { changes in delivered += changes.movedRows.count + changes.updatedRows.count }
        let micros = try drive(store, moves) {
            let before = delivered
            // The change is delivered when the result has taken the commit (its observer ran on the writer's
            // thread before save() returned, or runs now).
            while delivered == before { live.refresh() }
        }
        token.cancel()
        view.refresh()
        let correct = live.objectIDs == (try view.fetchIdentifiers(liveDescriptor))
        return (micros, correct)
    }

    @MainActor
    static func measureBaseline(_ store: Store, moves: ArraySlice<(ObjectID, Double, Int?)>) throws -> [Double] {
        let view = store.viewContext
        view.refresh()
        var shown = try view.fetchIdentifiers(liveDescriptor)
        var changed = 0
        let micros = try drive(store, moves) {
            let target = store.snapshot.sequence
            while view.snapshot.sequence < target { view.refresh() }
            let ids = try view.fetchIdentifiers(liveDescriptor)
            changed += ids.difference(from: shown).count
            shown = ids
        }
        guard changed >= moves.count else { throw BenchError("the baseline saw \(changed) changes") }
        return micros
    }
}

/// A failure inside a step's own machinery.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

import Dispatch
import Foundation
import Synchronization
import Trellis

/// The UI-style reader: each fetch takes the current snapshot, counts folders and items, and reads the first 50
/// items in rank order. A fetch is consistent when the item and folder counts belong to one committed version.
final class ReaderLoop: Sendable {
    let store: Store
    let folder: EntityKey
    let item: EntityKey
    let rank: IndexKey
    let title: AttributeKey
    let console: Console
    private let running = Atomic<Bool>(false)
    private let fetches = Atomic<Int>(0)
    private let worstNanos = Atomic<Int>(0)
    private let windowWorstNanos = Atomic<Int>(0)
    private let badResults = Atomic<Int>(0)
    private let finished = DispatchSemaphore(value: 0)
    /// (sequence, folders, items) for every committed version, recorded by the writer.
    private let versions = Mutex<[UInt64: (Int, Int)]>([:])

    init(store: Store, folder: EntityKey, item: EntityKey, rank: IndexKey, console: Console) {
        self.store = store
        self.console = console
        self.folder = folder
        self.item = item
        self.rank = rank
        self.title = try! store.schema.attribute("Item", "title")
        record(store.snapshot)
    }

    private func record(_ s: Snapshot) {
        versions.locked { $0[s.sequence] = (s.count(entity: folder), s.count(entity: item)) }
    }

    func start() {
        running.store(true, ordering: .releasing)
        let thread = Thread { [self] in
            while running.load(ordering: .acquiring) {
                let start = DispatchTime.now().uptimeNanoseconds
                let s = store.snapshot
                let folders = s.count(entity: folder)
                let items = s.count(entity: item)
                let first = s.scan(rank, limit: 50)
                let titles = first.compactMap { s.value($0, title) }
                let elapsed = Int(DispatchTime.now().uptimeNanoseconds - start)
                let expected = versions.locked { $0[s.sequence] }
                if let expected, expected != (folders, items) || titles.count != min(50, items) {
                    badResults.add(1, ordering: .relaxed)
                }
                fetches.add(1, ordering: .relaxed)
                if elapsed > worstNanos.load(ordering: .relaxed) { worstNanos.store(elapsed, ordering: .relaxed) }
                if elapsed > windowWorstNanos.load(ordering: .relaxed) {
                    windowWorstNanos.store(elapsed, ordering: .relaxed)
                }
            }
            finished.signal()
        }
        thread.start()
    }

    func stop() {
        running.store(false, ordering: .releasing)
        finished.wait()
    }

    var totalFetches: Int { fetches.load(ordering: .relaxed) }
    var worstLatency: Double { Double(worstNanos.load(ordering: .relaxed)) / 1e9 }
    var inconsistent: Int { badResults.load(ordering: .relaxed) }

    /// Runs one save on this thread while the reader keeps fetching; prints what the reader did meanwhile.
    @discardableResult
    func during<R>(_ label: String, _ save: () throws -> R) rethrows -> R {
        let before = fetches.load(ordering: .relaxed)
        windowWorstNanos.store(0, ordering: .relaxed)
        let start = DispatchTime.now().uptimeNanoseconds
        let result = try save()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        record(store.snapshot)
        let during = fetches.load(ordering: .relaxed) - before
        let worst = Double(windowWorstNanos.load(ordering: .relaxed)) / 1e9
        console.line(
            "\(label): \(String(format: "%.2f", seconds)) s; the reader completed \(during) fetches meanwhile, "
                + "worst \(Demo.ms(worst))")
        return result
    }
}

import Dispatch
import Foundation
import Synchronization
import Trellis

/// `trellis demo`: the seed problem in a few seconds. A UI-style reader fetches in a loop while a background writer
/// saves a 100,000-item import and then deletes a 111,111-folder hierarchy with cascade; the reader never waits.
enum DemoCommand {
    static let help = """
        usage: trellis demo [--items N] [--fan-out F] [--depth D]

        Builds an outline store (folders holding items), then runs a reader loop while a background writer imports
        N items (default 100000) in one commit and deletes a folder tree of fan-out F and depth D (default 10 and 6:
        111,111 folders) in one cascading commit. Prints how many fetches the reader completed during each save,
        its worst fetch latency, and checks every fetch saw a whole version (before or after, never between).

        """

    static func run(_ arguments: [String]) throws -> ExitCode {
        var items = 100_000
        var fanOut = 10
        var depth = 6
        var rest = arguments[...]
        while let arg = rest.popFirst() {
            switch arg {
            case "--help", "-h":
                print(help, terminator: "")
                return .ok
            case "--items": items = try intValue(arg, rest.popFirst())
            case "--fan-out": fanOut = try intValue(arg, rest.popFirst())
            case "--depth": depth = try intValue(arg, rest.popFirst())
            default: throw UsageError(description: "unknown option '\(arg)'\n\n\(help)")
            }
        }
        return try Demo(items: items, fanOut: fanOut, depth: depth).run()
    }

    static func intValue(_ option: String, _ text: String?) throws -> Int {
        guard let text, let n = Int(text), n > 0 else {
            throw UsageError(description: "\(option) takes a positive whole number")
        }
        return n
    }
}

struct Demo {
    let items: Int
    let fanOut: Int
    let depth: Int

    static let schema: Schema = try! Schema([
        EntityDescription(
            "Folder", attributes: [AttributeDescription("name", .string)],
            relationships: [
                RelationshipDescription("parent", to: "Folder", inverse: "children"),
                RelationshipDescription(
                    "children", to: "Folder", inverse: "parent", toMany: true, deleteRule: .cascade),
                RelationshipDescription("items", to: "Item", inverse: "folder", toMany: true, deleteRule: .cascade),
            ], indexes: [.on("name")]),
        EntityDescription(
            "Item",
            attributes: [
                AttributeDescription("title", .string), AttributeDescription("rank", .int),
                AttributeDescription("done", .bool, default: false),
            ],
            relationships: [RelationshipDescription("folder", to: "Folder", inverse: "items")],
            indexes: [.on("rank")]),
    ])

    func run() throws -> ExitCode {
        let store = Store(schema: Self.schema)
        let folder = try Self.schema.entityNumber("Folder")
        let item = try Self.schema.entityNumber("Item")
        let rank = try Self.schema.index("Item", ["rank"])
        let inbox = try store.write { tx in try tx.insert("Folder", ["name": "Inbox"]) }
        print("Trellis demo: an outline store (folders holding items), in memory")

        let reader = ReaderLoop(store: store, folder: folder, item: item, rank: rank)
        reader.start()

        try reader.during("import of \(items) items (one commit)") {
            var tx = store.transaction()
            for i in 0..<items {
                let id = tx.insert(entity: item, row: [.string("item \(i)"), .int(Int64(i)), .bool(false)])
                try tx.link(id, "folder", inbox)
            }
            try store.commit(tx)
        }
        let folders = (0..<depth).reduce(0) { total, level in total + Int(pow(Double(fanOut), Double(level))) }
        let treeRoot = try reader.during("build of a \(folders)-folder tree (one commit)") {
            var tx = store.transaction()
            let root = tx.insert(entity: folder, row: [.string("Archive")])
            var level = [root]
            for _ in 1..<depth {
                var next: [ObjectID] = []
                for parent in level {
                    for i in 0..<fanOut {
                        let child = tx.insert(entity: folder, row: [.string("folder \(i)")])
                        try tx.link(child, "parent", parent)
                        next.append(child)
                    }
                }
                level = next
            }
            try store.commit(tx)
            return root
        }
        try reader.during("cascade delete of the \(folders)-folder tree (one commit)") {
            try store.write { tx in try tx.delete(treeRoot) }
        }
        reader.stop()

        let final = store.snapshot
        print(
            "final store: \(try final.count("Folder")) folders, \(try final.count("Item")) items, "
                + "sequence \(final.sequence)")
        print(
            "reader: \(reader.totalFetches) fetches in all, worst \(Self.ms(reader.worstLatency)), "
                + "inconsistent results: \(reader.inconsistent)")
        return reader.inconsistent == 0 ? .ok : .failed
    }

    static func ms(_ seconds: Double) -> String { String(format: "%.3f ms", seconds * 1000) }
}

/// The UI-style reader: each fetch takes the current snapshot, counts folders and items, and reads the first 50
/// items in rank order. A fetch is consistent when the item and folder counts belong to one committed version.
final class ReaderLoop: Sendable {
    let store: Store
    let folder: UInt32
    let item: UInt32
    let rank: IndexKey
    let title: AttributeKey
    private let running = Atomic<Bool>(false)
    private let fetches = Atomic<Int>(0)
    private let worstNanos = Atomic<Int>(0)
    private let windowWorstNanos = Atomic<Int>(0)
    private let badResults = Atomic<Int>(0)
    private let finished = DispatchSemaphore(value: 0)
    /// (sequence, folders, items) for every committed version, recorded by the writer.
    private let versions = Mutex<[UInt64: (Int, Int)]>([:])

    init(store: Store, folder: UInt32, item: UInt32, rank: IndexKey) {
        self.store = store
        self.folder = folder
        self.item = item
        self.rank = rank
        self.title = try! store.schema.attribute("Item", "title")
        record(store.snapshot)
    }

    private func record(_ s: Snapshot) {
        versions.withLock { $0[s.sequence] = (s.count(entity: folder), s.count(entity: item)) }
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
                let expected = versions.withLock { $0[s.sequence] }
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
        print(
            "\(label): \(String(format: "%.2f", seconds)) s; the reader completed \(during) fetches meanwhile, "
                + "worst \(Demo.ms(worst))")
        return result
    }
}

import Foundation
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// A schema and a random workload that exercises everything the journal must carry: every value type, to-one and
/// to-many relationships, cascades, nullify, and no-action deletes that leave dangling targets.
enum JournalWorkload {
    static let schema = try! Schema([
        EntityDescription(
            "Folder", attributes: [AttributeDescription("name", .string), AttributeDescription("rank", .int)],
            relationships: [
                RelationshipDescription("parent", to: "Folder", inverse: "children"),
                RelationshipDescription(
                    "children", to: "Folder", inverse: "parent", toMany: true, deleteRule: .cascade),
                RelationshipDescription("items", to: "Item", inverse: "folder", toMany: true, deleteRule: .cascade),
            ]),
        EntityDescription(
            "Item",
            attributes: [
                AttributeDescription("title", .string), AttributeDescription("score", .double),
                AttributeDescription("count", .int64),
                AttributeDescription("done", .bool, optional: true), AttributeDescription("due", .date, optional: true),
                AttributeDescription("note", .data, optional: true),
                AttributeDescription("ident", .uuid, optional: true),
                AttributeDescription("link", .url, optional: true),
                AttributeDescription("price", .decimal, optional: true),
                AttributeDescription("small", .int16, default: 0),
                AttributeDescription("ratio", .float, optional: true),
            ],
            relationships: [
                RelationshipDescription("folder", to: "Folder", inverse: "items"),
                RelationshipDescription("tags", to: "Tag", inverse: "items", toMany: true),
            ],
            indexes: [.on("score")]),
        EntityDescription(
            "Tag", attributes: [AttributeDescription("label", .string)],
            relationships: [
                RelationshipDescription("items", to: "Item", inverse: "tags", toMany: true, deleteRule: .noAction)
            ],
            indexes: [.unique("label")]),
    ])

    /// Runs `commits` random transactions against `store`; a transaction the store refuses is skipped. Calls
    /// `between` after each commit (for compactions).
    static func run(
        _ store: Store, seed: UInt64, commits: Int, between: (Int) throws -> Void = { _ in }
    ) throws {
        var random = SeededRandom(seed: seed)
        var labels = 0
        for n in 0..<commits {
            let snapshot = store.snapshot
            let folders = try snapshot.objectIDs("Folder")
            let items = try snapshot.objectIDs("Item")
            let tags = try snapshot.objectIDs("Tag")
            var tx = store.transaction()
            for _ in 0..<(1 + Int(random.next() % 4)) {
                switch random.next() % 10 {
                case 0, 1:
                    let f = try tx.insert(
                        "Folder", ["name": .string("f\(random.next() % 1000)"), "rank": .int(Int64(n))])
                    if let parent = folders.randomElement(using: &random), random.next() % 2 == 0 {
                        try tx.link(f, "parent", parent)
                    }
                case 2, 3, 4:
                    let i = try tx.insert("Item", itemValues(&random))
                    if let folder = folders.randomElement(using: &random) { try tx.link(i, "folder", folder) }
                    if let tag = tags.randomElement(using: &random) { try tx.link(i, "tags", tag) }
                case 5:
                    if let i = items.randomElement(using: &random) {
                        for (k, v) in itemValues(&random) where random.next() % 3 == 0 { try tx.set(i, k, v) }
                    }
                case 6:
                    labels += 1
                    _ = try tx.insert("Tag", ["label": .string("t\(seed)-\(labels)-\(random.next() % 100_000)")])
                case 7:
                    if let i = items.randomElement(using: &random), let t = tags.randomElement(using: &random) {
                        if random.next() % 2 == 0 { try tx.link(i, "tags", t) } else { try tx.unlink(i, "tags", t) }
                    }
                    if let i = items.randomElement(using: &random) {
                        try tx.setTarget(i, "folder", folders.randomElement(using: &random))
                    }
                case 8:
                    if let i = items.randomElement(using: &random) { try tx.delete(i) }
                    if let t = tags.randomElement(using: &random), random.next() % 3 == 0 { try tx.delete(t) }
                default:
                    if let f = folders.randomElement(using: &random), random.next() % 2 == 0 { try tx.delete(f) }
                }
            }
            do {
                try store.commit(tx)
            } catch let error as TrellisError where error.code != .failed && error.code != .io {
                // A transaction that breaks a rule is refused whole; the workload carries on.
            }
            try between(n)
        }
    }

    static func itemValues(_ random: inout SeededRandom) -> [String: Value] {
        var v: [String: Value] = [
            "title": .string("item \(random.next() % 10_000) ✓"),
            "score": .double(Double(random.next() % 100_000) / 7),
            "count": .int(Int64(bitPattern: random.next()) >> Int64(random.next() % 60)),
            "small": .int(Int64(random.next() % 60_000) - 30_000),
        ]
        if random.next() % 2 == 0 { v["done"] = .bool(random.next() % 2 == 0) }
        if random.next() % 2 == 0 {
            v["due"] = .date(Date(timeIntervalSince1970: Double(random.next() % 1_000_000_000)))
        }
        if random.next() % 3 == 0 { v["note"] = .data(Data((0..<Int(random.next() % 40)).map { UInt8($0 * 7 % 256) })) }
        if random.next() % 3 == 0 { v["ident"] = .uuid(UUID()) }
        if random.next() % 4 == 0 { v["link"] = .url(URL(string: "https://example.com/a?b=\(random.next() % 99)")!) }
        if random.next() % 4 == 0 { v["price"] = .decimal(Decimal(Int(random.next() % 100_000)) / 100) }
        if random.next() % 4 == 0 { v["ratio"] = .double(Double(Float(random.next() % 1000) / 3)) }
        if random.next() % 10 == 0 { v["score"] = .double(-0.0) }
        return v
    }
}

/// A fresh path on a simulated disk, and helpers for tests that use one.
extension SimulatedFileLayer {
    static let storePath = "/store"

    func options(
        _ durability: StoreOptions.Durability = .perCommit, compaction: StoreOptions.Compaction = .manual
    )
        -> StoreOptions
    {
        var options = StoreOptions(durability: durability, compaction: compaction)
        options.fileLayer = self
        return options
    }

    func open(
        _ schema: Schema = JournalWorkload.schema, _ options: StoreOptions? = nil
    ) throws -> Store {
        try Store(directory: URL(fileURLWithPath: Self.storePath), schema: schema, options: options ?? self.options())
    }

    func names() -> [String] { ((try? list(Self.storePath)) ?? []).sorted() }
}

/// A temporary directory for tests on the real file system, removed afterwards.
struct TemporaryDirectory: ~Copyable {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-\(UUID().uuidString)")
    }

    var store: URL { url.appendingPathComponent("store") }

    deinit { try? FileManager.default.removeItem(at: url) }
}

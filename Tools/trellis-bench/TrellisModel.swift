import Foundation
import Trellis

/// The workload's schema for Trellis, with every key resolved once so the hot loops skip name lookups.
struct TrellisModel: Sendable {
    let schema: Schema
    let item: EntityKey
    let folder: EntityKey
    let id: AttributeKey
    let title: AttributeKey
    let score: AttributeKey
    let flag: AttributeKey
    let created: AttributeKey
    let n1: AttributeKey
    let n2: AttributeKey
    let n3: AttributeKey
    let n4: AttributeKey
    let n5: AttributeKey
    let idIndex: IndexKey
    let scoreIndex: IndexKey

    init() throws {
        let itemAttributes: [(String, AttributeType)] = [
            ("id", .int64), ("title", .string), ("score", .double), ("flag", .bool), ("created", .date),
            ("n1", .int64), ("n2", .int64), ("n3", .int64), ("n4", .int64), ("n5", .int64),
        ]
        let schema = try Schema([
            EntityDescription(
                "Item", attributes: itemAttributes.map { AttributeDescription($0.0, $0.1) },
                // (score, id) rather than score alone: W3b's index-only row reads id in score order from the index,
                // as LMDB's score index (whose data is the id) answers it.
                indexes: [.unique("id"), .on("score", "id")]),
            EntityDescription(
                "Folder", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("parent", to: "Folder", inverse: "children"),
                    RelationshipDescription(
                        "children", to: "Folder", inverse: "parent", toMany: true, deleteRule: .cascade),
                ]),
        ])
        self.schema = schema
        item = try schema.entity("Item")
        folder = try schema.entity("Folder")
        id = try schema.attribute("Item", "id")
        title = try schema.attribute("Item", "title")
        score = try schema.attribute("Item", "score")
        flag = try schema.attribute("Item", "flag")
        created = try schema.attribute("Item", "created")
        n1 = try schema.attribute("Item", "n1")
        n2 = try schema.attribute("Item", "n2")
        n3 = try schema.attribute("Item", "n3")
        n4 = try schema.attribute("Item", "n4")
        n5 = try schema.attribute("Item", "n5")
        idIndex = try schema.index("Item", ["id"])
        scoreIndex = try schema.index("Item", ["score", "id"])
    }

    /// An item as a full row in schema order, for `Transaction.insert(entity:row:)`.
    @inline(__always)
    func row(_ item: ItemData) -> [Value] {
        [
            .int(item.id), .string(item.title), .double(item.score), .bool(item.flag),
            .date(Date(timeIntervalSince1970: item.created)), .int(item.n1), .int(item.n2), .int(item.n3),
            .int(item.n4), .int(item.n5),
        ]
    }
}

/// How the bench opens a Trellis store: the one place that knows where it lives.
enum TrellisStorage {
    /// Shown in the report's machine line and JSON.
    static let description =
        "directory store (journal; durable: per commit, relaxed: interval 1 s; compaction automatic and at close)"
    /// Shown next to figures that do not yet measure what the workload asks; nil now that the store is on disk.
    static let caveat: String? = nil
    /// Whether a store survives `close()` and opens again with its objects.
    static let isPersistent = true

    /// Opens (or creates) the store under `directory`. Durability is an option of the open store: per commit is
    /// SQLite's `synchronous=FULL`; relaxed is group commit with a sync at most a second later (SQLite's `NORMAL`
    /// syncs only at checkpoints). Compaction is the default policy (automatic after commits, on a thread of the
    /// lowest priority) plus compaction at close, as SQLite checkpoints its WAL when its last connection closes.
    /// `compactsAtClose` false: a store about to be thrown away (W8's copy) skips the compaction its close would do.
    static func open(
        directory: String, model: TrellisModel, durability: Durability, compactsAtClose: Bool = true
    ) throws -> Store {
        try open(directory: directory, schema: model.schema, durability: durability, compactsAtClose: compactsAtClose)
    }

    /// Opens the store under `directory` with `schema`, the same way; a store written with another schema migrates
    /// (M1) when the difference is lightweight.
    static func open(
        directory: String, schema: Schema, durability: Durability, compactsAtClose: Bool = true
    ) throws -> Store {
        let options = StoreOptions(
            durability: durability == .perCommit ? .perCommit : .interval(1),
            compaction: .init(atClose: compactsAtClose))
        return try Store(directory: URL(fileURLWithPath: directory), schema: schema, options: options)
    }

    /// Closes the store, syncing what it still buffers.
    static func close(_ store: Store) throws { try store.close() }

    /// Writes a checkpoint of the live graph and drops the journal it covers.
    /// With automatic compaction there may be little left to compact, so the checkpoint is written even when it is up
    /// to date: W9 times a whole rewrite, as VACUUM is one.
    static func compact(_ store: Store) throws -> Bool {
        try store.compact(evenIfUpToDate: true)
        return true
    }

    /// Bytes of every file in the store's directory, once no compaction is running (one in flight holds a checkpoint
    /// half written beside the journal it replaces).
    static func bytesOnDisk(_ store: Store, directory: String) -> Int? {
        store.waitForCompaction()
        return DiskUsage.bytes(under: directory)
    }
}

import Foundation
import Trellis

/// `trellis demo [DIR]`: the seed problem in a few seconds, on a real store. A UI-style reader fetches in a loop
/// while a writer saves a 100,000-item import and then deletes a 111,111-folder hierarchy with cascade, each save
/// durable before it returns; the reader never waits. Then the store is reopened with version 2 of its schema, which
/// migrates it in one record, and `info` and `verify` run on the store it made.
struct DemoCommand: Command {
    static let name = "demo"
    static let summary = "build an outline store on disk and show a reader that never waits for big saves"
    static let help = """
        usage: trellis demo [DIR] [--items N] [--fan-out F] [--depth D]

        Creates an outline store (folders holding items) in DIR (which must be new or empty; default: a fresh
        directory under the system's temporary directory), then runs a reader loop while the writer imports N items
        (default 100000) in one commit, builds a folder tree of fan-out F and depth D (default 10 and 6: 111,111
        folders) in another, and deletes the tree in one cascading commit. Every commit is durable (synced) before
        it returns. Prints how many fetches the reader completed during each save, its worst fetch latency, and
        whether every fetch saw a whole version. Then it reopens the store with version 2 of its schema (items gain
        a `priority` with an index), which migrates it in one atomic record, and runs `trellis info` and
        `trellis verify` on the store.

        Exits 0 when every fetch was consistent and the store verifies clean, else 1.
        """

    var directory: String?
    var items: Int
    var fanOut: Int
    var depth: Int

    init(parsing arguments: inout Arguments) throws {
        items = try arguments.number("--items", as: Int.self, minimum: 1) ?? 100_000
        fanOut = try arguments.number("--fan-out", as: Int.self, minimum: 1) ?? 10
        depth = try arguments.number("--depth", as: Int.self, minimum: 1) ?? 6
        directory = arguments.optionalPositional()
        // 10^8 folders would not fit in memory, let alone a demo; refuse before building anything.
        guard pow(Double(fanOut), Double(depth - 1)) <= 10_000_000 else {
            throw UsageError("a tree of fan-out \(fanOut) and depth \(depth) is too large for a demo")
        }
    }

    func run(_ console: Console) throws -> ExitCode {
        let url = try Self.prepare(directory)
        let store = try Store(directory: url, schema: Demo.schema)
        let demo = Demo(items: items, fanOut: fanOut, depth: depth)
        let consistent: Bool
        do {
            console.line("Trellis demo: an outline store (folders holding items) in \(url.path)")
            consistent = try demo.run(store, console)
            try store.close()
        } catch {
            try? store.close()
            throw error
        }
        try Demo.migrate(url, console)
        console.line("\n$ trellis info \(url.path)")
        let info = try InfoCommand(store: url.path, json: false).run(console)
        console.line("\n$ trellis verify \(url.path)")
        let verify = try VerifyCommand(store: url.path, json: false).run(console)
        return consistent && info == .ok && verify == .ok ? .ok : .failed
    }

    /// A new directory for the store: DIR when it is new or empty, else a fresh one under the temporary directory.
    static func prepare(_ directory: String?) throws -> URL {
        guard let directory else {
            let name = "trellis-demo-" + UUID().uuidString.prefix(8).lowercased()
            return FileManager.default.temporaryDirectory.appendingPathComponent(name)
        }
        let contents = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        guard contents.isEmpty else {
            throw CommandFailure("\(directory) is not empty; give the demo a new or empty directory")
        }
        return URL(fileURLWithPath: directory)
    }
}

/// The demo's workload: the schema of an outline app and the three big saves.
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

    /// Version 2 of the schema: items gain a priority (default 0) and an index on it.
    static let schemaV2: Schema = {
        var entities = schema.entities
        entities[1].attributes.append(AttributeDescription("priority", .int, default: 0))
        entities[1].indexes.append(.on("priority"))
        return try! Schema(entities)
    }()

    /// Reopens the store with `schemaV2`: the open recovers the store, then migrates it in one record.
    static func migrate(_ url: URL, _ console: Console) throws {
        let start = DispatchTime.now().uptimeNanoseconds
        let store = try Store(directory: url, schema: schemaV2)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let migration = store.schema.history.last
        try store.close()
        console.line(
            "reopen with schema v2 (recovery, then the migration as one record at sequence "
                + "\(migration.map { String($0.sequence) } ?? "?")): \(String(format: "%.3f", seconds)) s; "
                + (migration?.steps.joined(separator: "; ") ?? "no migration"))
    }

    var folders: Int { (0..<depth).reduce(0) { total, level in total + Int(pow(Double(fanOut), Double(level))) } }

    /// Runs the saves with the reader going; returns whether every fetch saw a whole version.
    func run(_ store: Store, _ console: Console) throws -> Bool {
        let folder = try Self.schema.entity("Folder")
        let item = try Self.schema.entity("Item")
        let rank = try Self.schema.index("Item", ["rank"])
        let inbox = try store.write { tx in try tx.insert("Folder", ["name": "Inbox"]) }

        let reader = ReaderLoop(store: store, folder: folder, item: item, rank: rank, console: console)
        reader.start()
        try reader.during("import of \(items) items (one commit)") {
            var tx = store.transaction()
            for i in 0..<items {
                let id = tx.insert(entity: item, row: [.string("item \(i)"), .int(Int64(i)), .bool(false)])
                try tx.link(id, "folder", inbox)
            }
            try store.commit(tx)
        }
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
        console.line(
            "final store: \(try final.count("Folder")) folders, \(try final.count("Item")) items, "
                + "sequence \(final.sequence); every commit above was synced to disk before it returned")
        console.line(
            "reader: \(reader.totalFetches) fetches in all, worst \(Self.ms(reader.worstLatency)), "
                + "inconsistent results: \(reader.inconsistent)")
        return reader.inconsistent == 0
    }

    static func ms(_ seconds: Double) -> String { String(format: "%.3f ms", seconds * 1000) }
}

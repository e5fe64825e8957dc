import Foundation
import Trellis

/// A store with an attribute of nearly every type, for `find` and for how values print: projects and their tasks.
///
/// Commit 1 inserts Project#1 "Home" and Project#2 "Work"; commit 2 inserts Task#1…4 (below), each linked to its
/// project (Task#4 to none); commit 3 sets Task#3's `blob` from null to 0x00ff.
///
/// | task | title | done | stars | tiny | score | due (UTC) | blob | price | site | project |
/// | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
/// | 1 | Buy milk | false | 3 | 1 | 1.5 | 2026-11-29 00:00 | "Hello" | 1.10 | https://example.com/a | Home |
/// | 2 | Write report | true | 5 | 2 | 2.5 | 2026-12-01 09:30 | "Hello world!" | 99.99 | null | Work |
/// | 3 | Call "Bob" | false | 1 | -3 | 0.25 | null | 0x00ff | null | null | Work |
/// | 4 | Buy eggs | true | 3 | 4 | 3 | 2026-11-30 12:00 | empty | 2 | null | none |
enum TaskFixture {
    static let schema = try! Schema([
        EntityDescription(
            "Project", attributes: [AttributeDescription("name", .string)],
            relationships: [
                RelationshipDescription("tasks", to: "Task", inverse: "project", toMany: true, deleteRule: .cascade)
            ]),
        EntityDescription(
            "Task",
            attributes: [
                AttributeDescription("title", .string), AttributeDescription("done", .bool),
                AttributeDescription("stars", .int), AttributeDescription("tiny", .int8),
                AttributeDescription("score", .double), AttributeDescription("due", .date, optional: true),
                AttributeDescription("key", .uuid), AttributeDescription("blob", .data, optional: true),
                AttributeDescription("price", .decimal, optional: true),
                AttributeDescription("site", .url, optional: true),
            ],
            relationships: [RelationshipDescription("project", to: "Project", inverse: "tasks")],
            indexes: [.on("stars")]),
    ])

    /// The tasks' keys: 00000000-0000-0000-0000-00000000000N for Task#N.
    static func key(_ n: Int) -> UUID { UUID(uuidString: "00000000-0000-0000-0000-00000000000\(n)")! }

    static func date(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)!
    }

    static func make() throws -> URL {
        let directory = Fixture.newDirectory()
        let store = try Store(directory: directory, schema: schema, options: StoreOptions(compaction: .manual))
        let (home, work) = try store.write { tx in
            (try tx.insert("Project", ["name": "Home"]), try tx.insert("Project", ["name": "Work"]))
        }
        let rows: [(Int, [String: Value], ObjectID?)] = [
            (
                1,
                [
                    "title": "Buy milk", "done": false, "stars": 3, "tiny": 1, "score": 1.5,
                    "due": .date(date("2026-11-29T00:00:00Z")), "blob": .data(Data("Hello".utf8)),
                    "price": .decimal(Decimal(string: "1.10")!), "site": .url(URL(string: "https://example.com/a")!),
                ], home
            ),
            (
                2,
                [
                    "title": "Write report", "done": true, "stars": 5, "tiny": 2, "score": 2.5,
                    "due": .date(date("2026-12-01T09:30:00Z")), "blob": .data(Data("Hello world!".utf8)),
                    "price": .decimal(Decimal(string: "99.99")!),
                ], work
            ),
            (3, ["title": "Call \"Bob\"", "done": false, "stars": 1, "tiny": -3, "score": 0.25], work),
            (
                4,
                [
                    "title": "Buy eggs", "done": true, "stars": 3, "tiny": 4, "score": 3,
                    "due": .date(date("2026-11-30T12:00:00Z")), "blob": .data(Data()), "price": .decimal(2),
                ], nil
            ),
        ]
        let tasks = try store.write { tx in
            try rows.map { n, values, project in
                var values = values
                values["key"] = .uuid(key(n))
                let task = try tx.insert("Task", values)
                if let project { try tx.link(task, "project", project) }
                return task
            }
        }
        try store.write { tx in try tx.set(tasks[2], "blob", .data(Data([0x00, 0xff]))) }
        try store.close()
        return directory
    }
}

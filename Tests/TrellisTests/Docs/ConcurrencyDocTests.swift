import Foundation
import Testing
import Trellis

/// The examples of "Concurrency and Snapshots" (Trellis.docc/ConcurrencyAndSnapshots.md), verbatim, run and checked
/// (see `ReadmeTests` for how). `Chore` and `Folder` are the test module's models.
@MainActor @Suite struct ConcurrencyDocTests {
    // swift-format-ignore
    @Test func aSnapshotKeepsItsCountWhileALaterWriteCommits() throws {
        let store = try makeStore()
        try store.write { tx in
            for name in ["Inbox", "Archive", "Trash"] { _ = try tx.insert("Folder", ["name": .string(name)]) }
        }

        let snapshot = store.snapshot                 // O(1); never waits for a commit in progress
        let folders = try snapshot.count("Folder")    // O(1)

        let id = try store.write { tx in
            try tx.insert("Folder", ["name": "Inbox"])
        }

        #expect(folders == 3)
        #expect(try snapshot.count("Folder") == 3, "the snapshot never changes")
        #expect(try store.snapshot.count("Folder") == 4)
        #expect(try store.snapshot.value(id, "name") == "Inbox")
        #expect(!snapshot.contains(id))
    }

    /// A synchronous loop's `poll` brings the view context up to date and runs its handlers, with the main actor
    /// never running in between.
    // swift-format-ignore
    @Test func pollingFromSynchronousCodeRefreshesTheViewContextAndRunsItsHandlers() throws {
        let printed = Printed()
        func print(_ items: Any...) { printed.append(items) }
        let store = try makeStore()
        var reported: [ContextChanges] = []
        let token = store.viewContext.onChange { reported.append($0) }
        try store.write { tx in
            _ = try tx.insert("Chore", ["title": "one"])
            _ = try tx.insert("Chore", ["title": "two"])
        }

        @MainActor func poll(_ store: Store) throws {        // called from a synchronous loop
            let view = store.viewContext
            view.refresh()                                   // onChange handlers run here, with what changed
            print(try view.fetchCount(FetchDescriptor<Chore>()))
        }

        #expect(reported.isEmpty)
        try poll(store)
        #expect(printed.lines == ["2"])
        #expect(reported.map(\.inserted.count) == [2])
        token.cancel()
    }

    // swift-format-ignore
    @Test func rowsReadTheScoresOfEveryItemInPlace() throws {
        let schema = try Schema([
            EntityDescription("Item", attributes: [AttributeDescription("score", .double, optional: true)])
        ])
        let store = Store(schema: schema)
        try store.write { tx in
            for score: Value in [1.5, .null, 2.25, 4.0] { _ = try tx.insert("Item", ["score": score]) }
        }
        let snapshot = store.snapshot

        let item = try snapshot.schema.entity("Item")
        let score = try snapshot.schema.attribute("Item", "score")
        var total = 0.0
        for row in snapshot.rows(entity: item) { total += row.double(score) ?? 0 }

        #expect(total == 7.75)
    }
}

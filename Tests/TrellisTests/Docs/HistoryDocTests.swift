import Foundation
import Testing
import Trellis

/// The examples of "History" (Trellis.docc/History.md), verbatim, run and checked (see `ReadmeTests` for how).
/// `Project` and `Chore` are the test module's models; `print` is captured to check what the examples print.
@Suite(.serialized) struct HistoryDocTests {
    @Test func theExamplesReadTheFeedFollowItKeepItLookBackAndUndo() async throws {
        var printed: [String] = []
        func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }
        let temporary = TemporaryDirectory()
        let url = temporary.store
        let store = try Store(directory: url, models: [Project.self, Chore.self])

        let context = ModelContext(store)
        context.transactionAuthor = "editor"
        let chore = Chore(title: "Draft")
        context.insert(chore)
        try context.save()
        chore.title = "Final"
        try context.save()

        var token: HistoryToken? = nil  // the consumer's own, kept between runs
        for transaction in try store.history(since: token) {
            for change in transaction.changes(of: Chore.self) where change.kind == .update {
                let old = change.oldValue(\Chore.title) ?? ""
                let new = change.newValue(\Chore.title) ?? ""
                print(transaction.author ?? "-", old, "→", new)  // editor Draft → Final
            }
            token = transaction.token
        }
        let saved = try JSONEncoder().encode(token)  // store it with the consumer's state
        #expect(printed == ["editor Draft → Final"])
        #expect(try JSONDecoder().decode(HistoryToken?.self, from: saved)?.sequence == 2)

        printed = []
        token = HistoryToken(sequence: 1, storeID: try store.historyStoreID())
        let more = Chore(title: "More")
        context.insert(more)
        try context.save()
        for try await transaction in store.historyUpdates(since: token) {
            print(transaction.sequence, transaction.changes.count)
            if transaction.sequence >= 3 { break }
        }
        #expect(printed == ["2 1", "3 1"])

        printed = []
        let before = try store.snapshot(asOf: 1)
        print(try before.count("Chore"))
        #expect(printed == ["1"])

        let rename = try store.history().first { $0.sequence == 2 }!
        try context.undo(rename)  // the chore's title is "Draft" again
        #expect(chore.title == "Draft" && more.title == "More")
        try store.close()

        let other = TemporaryDirectory()
        try keep(other.store)
    }

    /// The retention example, on a store of its own.
    func keep(_ url: URL) throws {
        var options = StoreOptions()
        options.history = HistoryRetention(commits: 10_000, consumers: ["sync"])
        let synced = try Store(directory: url, models: [Project.self, Chore.self], options: options)
        try synced.acknowledgeHistory(consumer: "sync", token: try synced.currentHistoryToken())
        #expect(try synced.historyRetention().acknowledged == ["sync": 0])
    }
}

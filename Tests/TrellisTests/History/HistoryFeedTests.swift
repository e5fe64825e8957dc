import Foundation
import Synchronization
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// The change feed: every commit in order, with its author and time, inserts with their values, updates with old and
/// new values, links and unlinks, deletes with what they held; typed through model key paths; tokens that are
/// `Codable` and name their store.
@Suite struct HistoryFeedTests {
    static func open(_ url: URL, retention: HistoryRetention = .none) throws -> Store {
        var options = StoreOptions(compaction: .manual)
        options.history = retention
        return try Store(directory: url, models: [Project.self, Chore.self, Folder.self], options: options)
    }

    @Test func eachCommitReadsBackWithOldAndNewValuesLinksDeletesAndItsAuthor() throws {
        let temporary = TemporaryDirectory()
        let store = try Self.open(temporary.store)
        let context = ModelContext(store)
        context.transactionAuthor = "app"
        let launch = Project(name: "Launch")
        let plan = Chore(title: "Plan", estimate: 3)
        context.insert(launch)
        context.insert(plan)
        try context.save()  // 1: two inserts
        plan.title = "Plan it"
        plan.project = launch
        try context.save()  // 2: an update and a link
        context.transactionAuthor = nil
        plan.project = nil
        try context.save()  // 3: an unlink
        context.delete(plan)
        try context.save()  // 4: a delete

        let history = try store.history()
        #expect(history.map(\.sequence) == [1, 2, 3, 4])
        #expect(history.map(\.author) == ["app", "app", nil, nil])
        #expect(history.allSatisfy { !$0.isMigration && $0.schemaFingerprint == store.schema.fingerprint })
        #expect(zip(history, history.dropFirst()).allSatisfy { $0.time <= $1.time })

        let inserts = history[0].changes
        #expect(inserts.map(\.kind) == [.insert, .insert])
        let insertedChore = try #require(history[0].changes(of: Chore.self).first)
        #expect(insertedChore.newValue(\Chore.title) == "Plan")
        #expect(insertedChore.newValue(\Chore.estimate) == 3)
        #expect(insertedChore.oldValue(\Chore.title) == nil, "an insert has no old values")
        #expect(insertedChore.newValue(\Project.name) == nil, "a key path of another entity reads nothing")

        let update = try #require(history[1].changes(of: Chore.self).first)
        #expect(update.kind == .update && update.objectID == plan.objectID!)
        #expect(update.oldValue(\Chore.title) == "Plan" && update.newValue(\Chore.title) == "Plan it")
        #expect(update.oldValue("title") == .string("Plan") && update.newValue("title") == .string("Plan it"))
        #expect(update.changedAttributes == ["title"])
        #expect(update.oldValue(\Chore.estimate) == nil, "an attribute the update did not change is not recorded")
        #expect(
            history[1].relationshipChanges
                == [.init(kind: .link, source: plan.objectID!, relationship: "project", target: launch.objectID!)])
        #expect(history[2].relationshipChanges.map(\.kind) == [.unlink])
        #expect(history[2].relationshipChanges.first?.target == launch.objectID)

        let delete = try #require(history[3].changes.first)
        #expect(delete.kind == .delete && delete.objectID == plan.objectID!)
        #expect(delete.oldValue(\Chore.title) == "Plan it" && delete.oldValue(\Chore.estimate) == 3)
        #expect(delete.newValue(\Chore.title) == nil)
        #expect(delete.deletedTargets["project"] == [])

        // Reading from a token returns exactly what came after it, and a reopen reads the same (the author is on disk).
        #expect(try store.history(since: history[1].token).map(\.sequence) == [3, 4])
        #expect(try store.history(since: history[3].token).isEmpty)
        try store.close()
        let reopened = try Self.open(temporary.store)
        let again = try reopened.history()
        #expect(again.map(\.author) == ["app", "app", nil, nil])
        #expect(again.map(\.time) == history.map(\.time))
        #expect(again.map(\.changeSet) == history.map(\.changeSet))
    }

    @Test func tokensAreCodableAndRefusedByAnotherStore() throws {
        let one = TemporaryDirectory()
        let two = TemporaryDirectory()
        let a = try Self.open(one.store)
        let b = try Self.open(two.store)
        for store in [a, b] {
            let context = ModelContext(store)
            context.insert(Folder(name: "x"))
            try context.save()
        }
        let token = try #require(try a.history().last?.token)
        let decoded = try JSONDecoder().decode(HistoryToken.self, from: try JSONEncoder().encode(token))
        #expect(decoded == token && decoded.storeID != nil)
        #expect(try a.history(since: decoded).isEmpty)
        let error = #expect(throws: TrellisError.self) { try b.history(since: decoded) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("another store") == true)
        // The id survives a reopen.
        let id = try a.historyStoreID()
        try a.close()
        #expect(try Self.open(one.store).historyStoreID() == id)
    }

    @Test func historyUpdatesYieldThePastThenNewCommitsWithoutGapOrRepeat() async throws {
        let temporary = TemporaryDirectory()
        let store = try Self.open(temporary.store)
        let context = ModelContext(store)
        for k in 0..<3 {
            context.insert(Folder(name: "past \(k)"))
            try context.save()
        }
        var iterator = store.historyUpdates(since: HistoryToken(sequence: 1, storeID: try store.historyStoreID()))
            .makeAsyncIterator()
        var seen: [UInt64] = []
        for _ in 0..<2 { seen.append(try #require(try await iterator.next()).sequence) }
        for k in 0..<3 {
            context.insert(Folder(name: "new \(k)"))
            try context.save()
        }
        for _ in 0..<3 { seen.append(try #require(try await iterator.next()).sequence) }
        #expect(seen == [2, 3, 4, 5, 6])
    }

    @Test(
        "without per-commit durability, the feed delivers a commit only once the journal synced it: each entry is durable when the consumer gets it"
    )
    func historyUpdatesDeliverOnlyDurableEntries() async throws {
        let temporary = TemporaryDirectory()
        var options = StoreOptions(durability: .none, compaction: .manual)
        options.history = .none
        let store = try Store(
            directory: temporary.store, models: [Project.self, Chore.self, Folder.self], options: options)
        let journal = try #require(store.journal)
        let context = ModelContext(store)
        context.insert(Folder(name: "first"))
        try context.save()
        // Each entry with the newest durable commit at the moment the consumer got it.
        let received = Mutex<[(sequence: UInt64, durable: UInt64)]>([])
        let stream = store.historyUpdates(since: HistoryToken(sequence: 0, storeID: try store.historyStoreID()))
        let consumer = Task {
            for try await entry in stream {
                let durable = journal.durableSequence
                received.locked { $0.append((entry.sequence, durable)) }
            }
        }
        defer { consumer.cancel() }
        // The past read syncs what was published (`flush`): entry 1 arrives durable.
        #expect(await eventuallyYielding { received.locked { $0.count } == 1 })
        for k in 0..<3 {
            context.insert(Folder(name: "unsynced \(k)"))
            try context.save()
        }
        // The flusher writes the three records without a sync (the page cache holds them) ...
        let reader = try JournalReader(directory: temporary.store)
        #expect(
            try eventually(within: 30) {
                var records = 0
                _ = try reader.forEachRecord { _ in records += 1 }
                return records == 4
            })
        #expect(journal.durableSequence == 1)
        // ... and only the sync delivers them; none earlier (the consumer records the durable sequence it saw).
        try store.flush()
        #expect(await eventuallyYielding { received.locked { $0.count } == 4 })
        let entries = received.locked { $0 }
        #expect(entries.map(\.sequence) == [1, 2, 3, 4])
        #expect(entries.allSatisfy { $0.durable >= $0.sequence }, "delivered before its sync: \(entries)")
        try store.close()
    }

    @Test func readersOfTheFeedDoNotStopCommits() throws {
        // The feed reads files; a reader in the middle of its read holds nothing a commit needs.
        let temporary = TemporaryDirectory()
        let store = try Self.open(temporary.store)
        let context = ModelContext(store)
        for k in 0..<20 {
            context.insert(Folder(name: "f\(k)"))
            try context.save()
        }
        var committedDuringRead = 0
        try store.forEachHistoryEntry(since: nil) { entry in
            if entry.sequence == 10 {
                // A commit from inside the reader's callback: it would deadlock if reading held the writer's lock.
                var tx = store.transaction()
                try tx.insert("Folder", ["name": "during"])
                try store.commit(tx)
                committedDuringRead += 1
            }
        }
        #expect(committedDuringRead == 1 && store.snapshot.sequence == 21)
    }

    @Test func anInMemoryStoreKeepsNoHistory() throws {
        let store = try makeStore()
        let error = #expect(throws: TrellisError.self) { try store.history() }
        #expect(error?.code == .invalidArgument)
    }
}

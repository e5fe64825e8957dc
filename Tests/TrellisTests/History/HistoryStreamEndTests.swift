import Foundation
import Synchronization
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// `historyUpdates` ends when its store closes or is released: a consumer's `for try await` loop finishes after the
/// last commit made before the close, instead of waiting for good on a store that will publish nothing more, and the
/// stream then lets go of what it held of the closed store.
@Suite struct HistoryStreamEndTests {
    /// What a consumer task saw: the sequences, in order, and how the stream ended (nil while it runs).
    final class Consumer: Sendable {
        final class Seen: Sendable {
            let sequences = Mutex<[UInt64]>([])
            let end = Mutex<String?>(nil)
        }
        let state = Seen()
        let task: Task<Void, Never>

        init(_ stream: AsyncThrowingStream<HistoryTransaction, any Error>) {
            let state = self.state
            task = Task {
                do {
                    for try await entry in stream { state.sequences.locked { $0.append(entry.sequence) } }
                    state.end.locked { $0 = "finished" }
                } catch {
                    state.end.locked { $0 = "threw: \(error)" }
                }
            }
        }

        var seen: [UInt64] { state.sequences.locked { $0 } }
        var ended: String? { state.end.locked { $0 } }
    }

    static func open(_ url: URL, _ durability: StoreOptions.Durability) throws -> Store {
        try Store(
            directory: url, models: [Project.self, Chore.self, Folder.self],
            options: StoreOptions(durability: durability, compaction: .manual))
    }

    static func insertFolder(_ store: Store, _ name: String) throws {
        var tx = store.transaction()
        try tx.insert("Folder", ["name": .string(name)])
        try store.commit(tx)
    }

    @Test(
        "a history stream ends, without an error, once its store closes, after every commit made before the close",
        arguments: [StoreOptions.Durability.perCommit, .none])
    func aStreamEndsAtCloseAfterTheCommitsBeforeIt(_ durability: StoreOptions.Durability) async throws {
        let temporary = TemporaryDirectory()
        let store = try Self.open(temporary.store, durability)
        try Self.insertFolder(store, "before the stream")
        let consumer = Consumer(store.historyUpdates())
        defer { consumer.task.cancel() }
        #expect(await eventuallyYielding { consumer.seen == [1] }, "the past: \(consumer.seen)")
        // Unsynced in `.none` until the close's sync, which delivers them before the stream ends.
        for k in 0..<3 { try Self.insertFolder(store, "new \(k)") }
        #expect(consumer.ended == nil, "the stream runs while the store is open")
        try store.close()
        #expect(await eventuallyYielding(within: 10) { consumer.ended != nil }, "the stream ended after the close")
        #expect(consumer.ended == "finished")
        #expect(consumer.seen == [1, 2, 3, 4], "every commit before the close, in order, once")
    }

    @Test("a store released without close() ends its history streams, which then let its closed journal go")
    func aStreamEndsWhenItsStoreIsReleased() async throws {
        let temporary = TemporaryDirectory()
        weak var journal: Journal?
        var consumer: Consumer?
        do {
            // `.none`: the stream waits for syncs through the journal, so it held the journal until it ended.
            let store = try Self.open(temporary.store, .none)
            journal = store.journal
            for k in 0..<2 { try Self.insertFolder(store, "f\(k)") }
            consumer = Consumer(store.historyUpdates())
            #expect(await eventuallyYielding { consumer?.seen == [1, 2] })
            try Self.insertFolder(store, "last")
        }
        let ended = try #require(consumer)
        defer { ended.task.cancel() }
        #expect(await eventuallyYielding(within: 10) { ended.ended != nil }, "the stream ended with its store")
        #expect(ended.ended == "finished")
        #expect(ended.seen == [1, 2, 3], "the last commit was synced at the release and delivered first")
        #expect(await eventuallyYielding(within: 10) { journal == nil }, "nothing of the stream keeps the journal")
        consumer = nil
        // The release closed the store: it reopens for writing with the three commits.
        let reopened = try Self.open(temporary.store, .perCommit)
        #expect(try reopened.snapshot.count("Folder") == 3)
        try reopened.close()
    }

    /// What the observer of `aStreamEndsAfterTheCommitThatReleasedItsStoreOnTheFlusher` holds.
    final class Releaser: @unchecked Sendable {
        var store: Store?
        var token: ObservationToken?
    }

    @Test(
        "a store released by an observer on its flusher ends its history streams after the commit being published, even a stream registered after that observer"
    )
    func aStreamEndsAfterTheCommitThatReleasedItsStoreOnTheFlusher() async throws {
        let temporary = TemporaryDirectory()
        // The replicated commit: the second of a store that holds the same first folder.
        let source = try Store(models: [Project.self, Chore.self, Folder.self])
        try Self.insertFolder(source, "first")
        var tx = source.transaction()
        try tx.insert("Folder", ["name": "replicated"])
        let changes = try source.commit(tx).changes
        let releaser = Releaser()
        var consumer: Consumer?
        do {
            let store = try Self.open(temporary.store, .perCommit)
            try Self.insertFolder(store, "first")
            // Registered before the stream: it runs first and frees the store while the commit is being published.
            releaser.store = store
            releaser.token = store.observe { [releaser] _ in
                releaser.token = nil
                releaser.store = nil
            }
            consumer = Consumer(store.historyUpdates())
            #expect(await eventuallyYielding { consumer?.seen == [1] })
            try await Task.sleep(nanoseconds: 50_000_000)  // the past read lets go of the store
            try store.applyReplicated(changes, sequence: store.snapshot.sequence + 1, author: nil, waitDurable: false)
        }
        let ended = try #require(consumer)
        defer { ended.task.cancel() }
        #expect(await eventuallyYielding(within: 10) { ended.ended != nil }, "the stream ended with its store")
        #expect(ended.ended == "finished")
        #expect(ended.seen == [1, 2], "the commit published as the store was freed reached the stream first")
    }

    @Test("a stream whose store closes before its past is read still ends, with what it read in order, or an error")
    func aStreamEndsWhenItsStoreClosesBeforeThePastIsRead() async throws {
        for round in 0..<20 {
            let temporary = TemporaryDirectory()
            let store = try Self.open(temporary.store, .perCommit)
            for k in 0..<5 { try Self.insertFolder(store, "f\(k)") }
            let consumer = Consumer(store.historyUpdates())
            defer { consumer.task.cancel() }
            try store.close()
            #expect(await eventuallyYielding(within: 10) { consumer.ended != nil }, "round \(round): it ended")
            let seen = consumer.seen
            #expect(
                seen == Array((0..<UInt64(seen.count)).map { $0 + 1 }), "round \(round): a prefix, in order: \(seen)")
            if consumer.ended == "finished" {
                #expect(seen == [1, 2, 3, 4, 5], "round \(round): a normal end reads all")
            }
        }
    }
}

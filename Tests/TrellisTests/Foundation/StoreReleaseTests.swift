import Foundation
import Synchronization
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// The journal, a follower, observation tokens and the view context reach the store's published version through
/// `StorePublication`, held strongly, or hold the store unowned; nothing holds the store weakly (that gave every
/// retain of it the runtime's slow path). These tests prove the links make no cycle: a store an app lets go is
/// freed, its journal closed and its lock released, whatever was attached to it.
@MainActor @Suite struct StoreReleaseTests {
    static let schema = try! Schema([EntityDescription("Note", attributes: [.init("n", .int)])])

    final class Probe: @unchecked Sendable {
        weak var store: Store?
        weak var publication: StorePublication?
        weak var journal: Journal?
    }

    static func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("release-\(UUID().uuidString)")
    }

    /// Opens a store in `directory` with `durability`, attaches an observer, the view context and a follower's
    /// observer, commits, drops every reference but the probe's, and returns the probe and the observer's count.
    static func useAndDrop(_ directory: URL, _ durability: StoreOptions.Durability) throws -> (Probe, Int) {
        let probe = Probe()
        let seen = Mutex(0)
        do {
            let store = try Store(directory: directory, schema: schema, options: StoreOptions(durability: durability))
            probe.store = store
            probe.publication = store.publication
            probe.journal = store.journal
            let token = store.observe { _ in seen.locked { $0 += 1 } }
            let follower = try Store(directory: directory, schema: schema, options: .follower)
            let followed = follower.observe { _ in }
            let view = store.viewContext
            for i in 0..<3 { try store.write { tx in _ = try tx.insert("Note", ["n": .int(Int64(i))]) } }
            try store.flush()
            #expect(view.store === store)
            // The tokens are kept alive to the end: released with the store, not cancelled first.
            withExtendedLifetime((token, followed, follower)) {}
        }
        return (probe, seen.locked { $0 })
    }

    @Test(arguments: [StoreOptions.Durability.perCommit, .interval(60)])
    func aStoreWithAnObserverAViewContextAndAFollowerIsFreedWhenReleased(_ durability: StoreOptions.Durability) throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (probe, seen) = try Self.useAndDrop(directory, durability)
        #expect(seen == 3, "the observer saw the three commits")
        // The flusher may hold the journal a moment after the store's deinit closed it; the store itself goes at once.
        #expect(probe.store == nil, "the store was freed: nothing kept it alive")
        #expect(eventually(within: 10) { probe.journal == nil }, "the closed journal was freed")
        #expect(eventually(within: 10) { probe.publication == nil }, "and with it the published version")
        // Its deinit closed the journal and released the writer's lock: the directory opens for writing again, with
        // the commits made before the release.
        let reopened = try Store(directory: directory, schema: Self.schema)
        #expect(reopened.snapshot.count(entity: 0) == 3)
        try reopened.close()
    }

    /// What the observer of `aStoreReleasedOnItsFlusherThreadClosesWithoutWaitingForItself` holds and reports.
    final class FlusherRelease: @unchecked Sendable {
        var store: Store?
        var token: ObservationToken?
        let testDropped = DispatchSemaphore(value: 0)
        let handlerReturned = DispatchSemaphore(value: 0)
        var onFlusher = false
        var freedInHandler = false
    }

    /// An observer can hold a store's last reference; released while the flusher runs the observer, the store's
    /// `deinit` closes its journal on the flusher thread. That close used to wait for the flusher, the very thread
    /// it ran on, for good. A replica's commits (`applyReplicated` without waiting) are published on the flusher
    /// while no saver holds the store, so this is how an app reaches it.
    @Test func aStoreReleasedOnItsFlusherThreadClosesWithoutWaitingForItself() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = Store(schema: Self.schema)
        var tx = source.transaction()
        _ = try tx.insert("Note", ["n": .int(7)])
        let changes = try source.commit(tx).changes
        let probe = Probe()
        let release = FlusherRelease()
        do {
            let store = try Store(directory: directory, schema: Self.schema)
            probe.store = store
            probe.journal = store.journal
            release.store = store
            release.token = store.observe { [release, probe] _ in
                release.testDropped.wait()
                release.onFlusher = probe.journal?.isFlusherThread ?? false
                release.token = nil
                release.store = nil  // the last reference: the store's deinit runs here
                release.freedInHandler = probe.store == nil
                release.handlerReturned.signal()
            }
            try store.applyReplicated(changes, sequence: store.snapshot.sequence + 1, author: nil, waitDurable: false)
        }
        release.testDropped.signal()
        #expect(
            release.handlerReturned.wait(timeout: .now() + 10) == .success,
            "the handler returned: the store's deinit did not wait for the thread it ran on")
        #expect(release.onFlusher, "the observer ran on the flusher thread")
        #expect(release.freedInHandler, "the store was freed inside the handler, on the flusher")
        #expect(
            eventually(within: 10) { probe.journal == nil }, "the flusher finished the close and let the journal go")
        // The close it queued wrote and synced the record and released the lock.
        let reopened = try Store(directory: directory, schema: Self.schema)
        #expect(reopened.snapshot.count(entity: 0) == 1)
        let note = try #require(try reopened.snapshot.objectIDs("Note").first)
        #expect(try reopened.snapshot.value(note, "n") == .int(7))
        try reopened.close()
    }

    @Test func aClosedStoresObservationTokenOutlivesItAndCancelsQuietly() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let probe = Probe()
        var token: ObservationToken?
        do {
            let store = try Store(directory: directory, schema: Self.schema)
            probe.store = store
            probe.publication = store.publication
            token = store.observe { _ in }
            try store.write { tx in _ = try tx.insert("Note", ["n": .int(1)]) }
            try store.close()
        }
        #expect(probe.store == nil, "a token the app keeps does not keep the store")
        #expect(
            eventually(within: 10) { probe.publication == nil },
            "nor its published version (the token holds the handler lists)")
        token?.cancel()
        token = nil
    }
}

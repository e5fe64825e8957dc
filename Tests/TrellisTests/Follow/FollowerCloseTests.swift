import Dispatch
import Foundation
import Synchronization
import Testing

@testable import TrellisCore
@testable import TrellisJournal
@testable import TrellisStore

/// A follower's `close()` ends its publishing: a step running on the follower's thread is waited for, so no observer
/// runs after `close()` returns and the close watchers (history streams) are told after the last commit published.
/// A follower released inside its own step, on its own thread, still closes without waiting for itself.
@Suite struct FollowerCloseTests {
    static let schema = try! Schema([EntityDescription("Note", attributes: [.init("n", .int)])])

    static func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("follower-close-\(UUID().uuidString)")
    }

    /// What an observer that holds up its step records.
    final class SlowObserver: Sendable {
        let entered = DispatchSemaphore(value: 0)
        let returned = Atomic<Bool>(false)
        /// Signalled by the observer registered after the slow one: the step reached the last observer.
        let lastCalled = DispatchSemaphore(value: 0)
        let callsAfterClose = Atomic<Int>(0)
        let closeReturned = Atomic<Bool>(false)

        /// Counts a call to any of the follower's observers that began after `close()` returned.
        func called() {
            if closeReturned.load(ordering: .sequentiallyConsistent) {
                callsAfterClose.add(1, ordering: .sequentiallyConsistent)
            }
        }
    }

    @Test func closeWaitsForAStepThatIsPublishingOnTheFollowersThread() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let writer = try Store(directory: directory, schema: Self.schema)
        let follower = try Store(directory: directory, schema: Self.schema, options: .follower)
        let slow = SlowObserver()
        let token = follower.observe { [slow] _ in
            slow.called()
            slow.entered.signal()
            // Held long enough that a close which does not wait returns well before this does.
            Thread.sleep(forTimeInterval: 0.3)
            slow.returned.store(true, ordering: .sequentiallyConsistent)
        }
        // Called after the slow observer for the same commit: it begins after close() returned unless close waited
        // for the whole step.
        let last = follower.observe { [slow] _ in
            slow.called()
            slow.lastCalled.signal()
        }
        try writer.write { tx in _ = try tx.insert("Note", ["n": .int(1)]) }
        #expect(slow.entered.wait(timeout: .now() + 30) == .success, "the follower published the commit")
        try follower.close()
        slow.closeReturned.store(true, ordering: .sequentiallyConsistent)
        let observerReturned = slow.returned.load(ordering: .sequentiallyConsistent)
        #expect(observerReturned, "close() returned while the follower's step was still inside the observer")
        // The step delivered the commit to its last observer (before close() returned, or after it did).
        #expect(slow.lastCalled.wait(timeout: .now() + 30) == .success)
        // Commits made after the close are not published to the closed follower.
        try writer.write { tx in _ = try tx.insert("Note", ["n": .int(2)]) }
        try writer.flush()
        Thread.sleep(forTimeInterval: 0.2)
        let callsAfterClose = slow.callsAfterClose.load(ordering: .sequentiallyConsistent)
        #expect(callsAfterClose == 0, "observers were called after close() returned")
        #expect(follower.snapshot.sequence == 1, "the closed follower keeps the version it showed")
        token.cancel()
        last.cancel()
        try writer.close()
    }

    @Test func aClosedFollowersHistoryStreamHoldsEveryCommitItsObserversSawAndNoneFollows() async throws {
        for round in 0..<5 {
            let directory = Self.directory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let writer = try Store(directory: directory, schema: Self.schema)
            let follower = try Store(directory: directory, schema: Self.schema, options: .follower)
            // The commit the slow observer was last called with.
            let inside = Atomic<UInt64>(0)
            let entered = DispatchSemaphore(value: 0)
            let token = follower.observe { commit in
                inside.store(commit.sequence, ordering: .sequentiallyConsistent)
                entered.signal()
                Thread.sleep(forTimeInterval: 0.05)
            }
            let stream = follower.historyUpdates()
            // Registered after the stream's own observer, so called after the stream for each commit: a call that
            // begins after close() returned is a step still delivering, to the stream too, after close.
            let observed = Mutex<[UInt64]>([])
            let lastCalled = DispatchSemaphore(value: 0)
            let last = follower.observe { commit in
                observed.locked { $0.append(commit.sequence) }
                lastCalled.signal()
            }
            let collector = Task { () throws -> [UInt64] in
                var sequences: [UInt64] = []
                for try await transaction in stream { sequences.append(transaction.sequence) }
                return sequences
            }
            for n in 1...3 { try writer.write { tx in _ = try tx.insert("Note", ["n": .int(Int64(n))]) } }
            // Close while a step is inside the slow observer: what it publishes is in the stream before it ends.
            #expect(entered.wait(timeout: .now() + 30) == .success)
            try follower.close()
            let seenAtClose = observed.locked { $0 }
            let streamed = try await collector.value
            // The step reaches the last observer with the slow observer's commit: before close() returned, or after
            // it did when close did not wait. Waited for, so a late call is seen.
            let target = inside.load(ordering: .sequentiallyConsistent)
            while !observed.locked({ $0.contains(target) }) {
                guard lastCalled.wait(timeout: .now() + 30) == .success else { break }
            }
            let seen = observed.locked { $0 }
            #expect(seen.contains(target), "round \(round): the last observer got commit \(target)")
            #expect(seen == seenAtClose, "round \(round): observers ran after close() returned")
            let expected = seen.last.map { Array(1...$0) } ?? []
            #expect(streamed == expected, "round \(round): streamed \(streamed), observed \(seen)")
            token.cancel()
            last.cancel()
            try writer.close()
        }
    }

    /// What the observer of a follower that releases it holds: the follower's only strong reference, and what the
    /// observer saw.
    final class Release: @unchecked Sendable {
        var store: Store?
        var token: ObservationToken?
        weak var freed: Store?
        let handlerReturned = DispatchSemaphore(value: 0)
        var freedInHandler = false
        let sequences = Mutex<[UInt64]>([])

        /// Opens a follower of `directory` held only here (`freed` sees it go) and observes it with `handler`.
        func follow(_ directory: URL, _ handler: @escaping @Sendable (Release, Commit) -> Void) throws {
            let follower = try Store(directory: directory, schema: FollowerCloseTests.schema, options: .follower)
            store = follower
            freed = follower
            token = follower.observe { [self] commit in handler(self, commit) }
        }
    }

    @Test func aFollowerReleasedInsideItsOwnStepClosesWithoutWaitingForItself() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let writer = try Store(directory: directory, schema: Self.schema)
        let release = Release()
        try release.follow(directory) { release, _ in
            release.token = nil
            release.store = nil  // the last reference: the follower's deinit, and its close, run here
            release.freedInHandler = release.freed == nil
            release.handlerReturned.signal()
        }
        try writer.write { tx in _ = try tx.insert("Note", ["n": .int(1)]) }
        #expect(
            release.handlerReturned.wait(timeout: .now() + 10) == .success,
            "the handler returned: the follower's close did not wait for the step it ran in")
        #expect(release.freedInHandler)
        try writer.close()
    }

    /// A follower released by its observer on its own thread closes inside the step that is publishing: the step's
    /// later commits reach no observer of the closed store.
    @Test func aFollowerReleasedInsideItsOwnStepDeliversNoneOfItsLaterCommits() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Relaxed: the three commits become durable in one sync, so the follower reads them in one step.
        let writer = try Store(
            directory: directory, schema: Self.schema, options: StoreOptions(durability: .interval(60)))
        let deliveries = Release()
        try deliveries.follow(directory) { deliveries, commit in
            deliveries.sequences.locked { $0.append(commit.sequence) }
            guard deliveries.store != nil else { return }
            deliveries.store = nil  // the last reference: the follower's deinit, and its close, run here
            deliveries.handlerReturned.signal()
        }
        for n in 1...3 { try writer.write { tx in _ = try tx.insert("Note", ["n": .int(Int64(n))]) } }
        try writer.flush()
        #expect(deliveries.handlerReturned.wait(timeout: .now() + 10) == .success)
        // Room for the deliveries that must not come.
        usleep(300_000)
        #expect(deliveries.freed == nil)
        #expect(deliveries.sequences.locked { $0 } == [writer.snapshot.sequence - 2])
        deliveries.token = nil
        try writer.close()
    }
}

import Foundation
import Synchronization
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// A store's observers run while the store holds what a commit waits for (the writer lock, or in `.perCommit`
/// durability the journal's turn). A commit, flush, compaction or close of the same store from inside a handler used
/// to hang the process for good; now it throws `.calledFromObserver`, changes nothing, and the store carries on.
@Suite(.timeLimit(.minutes(1))) struct ObserverReentryTests {
    static let schema = try! Schema([EntityDescription("Note", attributes: [.init("n", .int)])])

    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case memory, relaxed, perCommit
        var testDescription: String { rawValue }
    }

    /// A store of `kind`; a directory store lives in a new temporary directory, returned beside it.
    static func open(_ kind: Kind, at existing: URL? = nil) throws -> (Store, URL?) {
        let directory =
            existing ?? FileManager.default.temporaryDirectory.appendingPathComponent("reentry-\(UUID().uuidString)")
        switch kind {
        case .memory: return (Store(schema: schema), nil)
        case .relaxed:
            return (
                try Store(directory: directory, schema: schema, options: StoreOptions(durability: .interval(60))),
                directory
            )
        case .perCommit:
            return (
                try Store(directory: directory, schema: schema, options: StoreOptions(durability: .perCommit)),
                directory
            )
        }
    }

    static func values(_ store: Store) -> [Int64] {
        store.snapshot.rows(entity: 0).map { $0.int(AttributeKey(entity: 0, index: 0)) ?? -1 }.sorted()
    }

    @Test(arguments: Kind.allCases) func aCommitFromAnObserverThrowsAndTheStoreCarriesOn(_ kind: Kind) throws {
        let (store, directory) = try Self.open(kind)
        defer { if let directory { try? FileManager.default.removeItem(at: directory) } }
        let caught = Mutex<[TrellisError.Code]>([])
        let seen = Mutex<[UInt64]>([])
        let token = store.observe { commit in
            seen.locked { $0.append(commit.sequence) }
            do {
                try store.write { tx in _ = try tx.insert("Note", ["n": .int(99)]) }
            } catch let error as TrellisError {
                caught.locked { $0.append(error.code) }
            } catch {
                Issue.record("not a TrellisError: \(error)")
            }
        }
        try store.write { tx in _ = try tx.insert("Note", ["n": .int(1)]) }
        #expect(caught.locked { $0 } == [.calledFromObserver], "the handler's commit was refused, once")
        #expect(Self.values(store) == [1], "the refused commit left nothing")
        // The store is neither stuck nor failed: the next commit, from outside a handler, goes through and is seen.
        token.cancel()
        try store.write { tx in _ = try tx.insert("Note", ["n": .int(2)]) }
        #expect(Self.values(store) == [1, 2])
        #expect(store.failure == nil)
        #expect(seen.locked { $0 }.count == 1, "the observer saw the first commit only (cancelled before the second)")
        try store.close()
        if let directory {
            let (reopened, _) = try Self.open(kind, at: directory)
            #expect(Self.values(reopened) == [1, 2], "on disk: both commits from outside, nothing from the handler")
            try reopened.close()
        }
    }

    @Test(arguments: Kind.allCases) func flushCompactAndCloseFromAnObserverThrowAndChangeNothing(_ kind: Kind) throws {
        let (store, directory) = try Self.open(kind)
        defer { if let directory { try? FileManager.default.removeItem(at: directory) } }
        let outcomes = Mutex<[String: TrellisError.Code?]>([:])
        let token = store.observe { _ in
            func attempt(_ name: String, _ call: () throws -> Void) {
                do {
                    try call()
                    outcomes.locked { $0[name] = .some(nil) }
                } catch let error as TrellisError {
                    outcomes.locked { $0[name] = error.code }
                } catch {
                    Issue.record("\(name): not a TrellisError: \(error)")
                }
            }
            attempt("flush") { try store.flush() }
            attempt("compact") { try store.compact() }
            attempt("catchUp") { _ = try store.catchUp() }
            attempt("close") { try store.close() }
        }
        try store.write { tx in _ = try tx.insert("Note", ["n": .int(1)]) }
        let got = outcomes.locked { $0 }
        // Refused in every kind of store, in memory too (where they wait for nothing), so tests of an app on an
        // in-memory store find the mistake.
        #expect(got["compact"] == .some(.calledFromObserver))
        #expect(got["close"] == .some(.calledFromObserver))
        #expect(got["flush"] == .some(.calledFromObserver))
        // catchUp on a store that does not follow waits for nothing and answers at once.
        #expect(got["catchUp"] == .some(nil))
        token.cancel()
        // Not closed: it still commits.
        try store.write { tx in _ = try tx.insert("Note", ["n": .int(2)]) }
        #expect(Self.values(store) == [1, 2])
        try store.close()
    }

    @Test(arguments: Kind.allCases) func anObserverThatHopsToAnotherQueueSaves(_ kind: Kind) throws {
        let (store, directory) = try Self.open(kind)
        defer { if let directory { try? FileManager.default.removeItem(at: directory) } }
        let queue = DispatchQueue(label: "reentry.hop")
        let saved = DispatchSemaphore(value: 0)
        let failures = Mutex<[String]>([])
        let token = store.observe { commit in
            // React to the first commit only, with a commit of its own made elsewhere.
            guard commit.sequence == 1 else { return }
            queue.async {
                do {
                    try store.write { tx in _ = try tx.insert("Note", ["n": .int(10)]) }
                } catch {
                    failures.locked { $0.append("\(error)") }
                }
                saved.signal()
            }
        }
        try store.write { tx in _ = try tx.insert("Note", ["n": .int(1)]) }
        #expect(saved.wait(timeout: .now() + 30) == .success, "the hopped commit finished")
        #expect(failures.locked { $0 }.isEmpty)
        #expect(Self.values(store) == [1, 10])
        token.cancel()
        try store.close()
    }

    @Test func aFollowersObserverCannotCatchUpOrCloseFromItsHandler() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reentry-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let writer = try Store(directory: directory, schema: Self.schema)
        let follower = try Store(directory: directory, schema: Self.schema, options: .follower)
        let outcomes = Mutex<[TrellisError.Code]>([])
        let published = DispatchSemaphore(value: 0)
        let token = follower.observe { _ in
            for call in [{ _ = try follower.catchUp() }, { try follower.close() }] {
                do {
                    try call()
                } catch let error as TrellisError {
                    outcomes.locked { $0.append(error.code) }
                } catch {
                    Issue.record("not a TrellisError: \(error)")
                }
            }
            published.signal()
        }
        try writer.write { tx in _ = try tx.insert("Note", ["n": .int(7)]) }
        // From the test's thread, outside any handler, catching up is allowed and publishes the commit.
        #expect(try follower.catchUp() == 1)
        #expect(published.wait(timeout: .now() + 30) == .success)
        #expect(outcomes.locked { $0 } == [.calledFromObserver, .calledFromObserver])
        #expect(follower.isFollowing, "the refused close left the follower following")
        #expect(Self.values(follower) == [7])
        token.cancel()
        try follower.close()
        try writer.close()
    }

    @Test func onlyTheThreadRunningAHandlerIsRefused() throws {
        let threads = ObserverThreads()
        #expect(!threads.includesCurrentThread)
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let seenInside = Mutex<Bool?>(nil)
        let worker = Thread {
            threads.run {
                seenInside.locked { $0 = threads.includesCurrentThread }
                inside.signal()
                release.wait()
            }
        }
        worker.start()
        inside.wait()
        // Another thread is inside a handler: this one is not, and may commit.
        #expect(seenInside.locked { $0 } == true)
        #expect(!threads.includesCurrentThread)
        #expect(throws: Never.self) { try threads.refuse("a commit") }
        threads.run {
            #expect(threads.includesCurrentThread)
            #expect(throws: TrellisError.self) { try threads.refuse("a commit") }
            // A handler whose work notifies again on this thread: still inside after the inner run returns.
            threads.run { #expect(threads.includesCurrentThread) }
            #expect(threads.includesCurrentThread)
        }
        release.signal()
        #expect(!threads.includesCurrentThread)
    }
}

import Foundation
import Synchronization
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

@Suite struct VersionReclaimerTests {
    /// Each commit hands the version it replaced to the reclaimer, which keeps at most `limit` of them and lets them
    /// all go on its own queue after the grace period: a reader dropping the version it read is not the last holder,
    /// so it never pays for freeing what a big commit replaced.
    @Test func replacedVersionsAreKeptForTheGracePeriodThenReleased() async throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        #expect(store.reclaimer.keptCount == 0)
        let root = try Fixtures.folderTree(in: store, fanOut: 10, depth: 4)
        let beforeDelete = store.snapshot
        try store.write { tx in try tx.delete(root) }
        #expect(store.reclaimer.keptCount == 2)
        #expect(store.reclaimer.keptVersions.last == beforeDelete.sequence)

        for i in 0..<100 { try store.write { tx in try tx.insert("Folder", ["name": .string("f\(i)")]) } }
        #expect(store.reclaimer.keptCount == VersionReclaimer.limit)
        #expect(store.reclaimer.keptVersions.last == store.snapshot.sequence - 1)
        // 102 replaced versions: 64 kept, 38 pushed out. The two that big commits replaced (the empty store, by the
        // tree's 1,111 inserts; the tree, by the cascade) wait for the queue; the 36 that one insert each replaced
        // were let go at once.
        #expect(store.reclaimer.overflowVersions == [0, 1])

        // Released by the timer after the grace period: waited for with a limit that fails the test.
        let released = eventually { store.reclaimer.keptCount == 0 && store.reclaimer.overflowCount == 0 }
        #expect(released, "kept \(store.reclaimer.keptCount), overflow \(store.reclaimer.overflowCount)")
    }

    /// Closing a store lets every kept version go at once, on the closing thread: a kept version shares most of its
    /// nodes with the published one, and left to the timer the whole graph was freed on the queue's thread up to a
    /// second later, while the caller was already opening the store again.
    @Test func closingTheStoreReleasesKeptVersionsAtOnce() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        // The tree's commit replaces the empty store with 1,111 inserts, so the limit pushes that version to the
        // queue's overflow, where it waits.
        _ = try Fixtures.folderTree(in: store, fanOut: 10, depth: 4)
        for i in 0..<100 { try store.write { tx in try tx.insert("Folder", ["name": .string("f\(i)")]) } }
        #expect(store.reclaimer.keptCount == VersionReclaimer.limit)
        #expect(store.reclaimer.overflowCount == 1)
        try store.close()
        #expect(store.reclaimer.keptCount == 0)
        #expect(store.reclaimer.overflowCount == 0)
        #expect(store.snapshot.count(entity: 0) == 1_111 + 100, "the published version stays readable")
    }

    /// A store dropped without `close()` lets its kept versions go as it goes, as closing does.
    @Test func droppingTheStoreReleasesKeptVersionsAtOnce() throws {
        var store: Store? = Store(schema: try Fixtures.outlineSchema())
        for i in 0..<10 { try store!.write { tx in try tx.insert("Folder", ["name": .string("f\(i)")]) } }
        let reclaimer = store!.reclaimer
        #expect(reclaimer.keptCount == 10)
        store = nil
        #expect(reclaimer.keptCount == 0)
    }

    /// A burst of small commits lets each version the limit pushes out go at once, on the committing thread: none
    /// waits for the queue, so no other thread frees the few nodes the committing thread just allocated. A reader
    /// that kept one of those versions still reads it whole.
    @Test func smallVersionsPushedOutByTheLimitAreLetGoAtOnce() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        try store.write { tx in try tx.insert("Folder", ["name": .string("first")]) }
        let kept = store.snapshot
        let burst = VersionReclaimer.limit + 3 * VersionReclaimer.overflowBatch
        for i in 0..<burst { try store.write { tx in try tx.insert("Folder", ["name": .string("f\(i)")]) } }
        #expect(store.reclaimer.keptCount == VersionReclaimer.limit)
        #expect(store.reclaimer.overflowCount == 0)
        #expect(store.reclaimer.keptVersions.first == store.snapshot.sequence - UInt64(VersionReclaimer.limit))
        #expect(kept.count(entity: 0) == 1)
        #expect(store.snapshot.count(entity: 0) == burst + 1)
    }

    /// Versions that big commits replaced still go to the queue when the limit pushes them out, small ones or not
    /// around them: the committing thread does not free what a big commit copied.
    @Test func bigVersionsPushedOutByTheLimitGoToTheQueue() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        let big = VersionReclaimer.freedInlineBelow
        for round in 0..<VersionReclaimer.limit + 4 {
            try store.write { tx in
                let count = round % 2 == 0 ? big : 1
                for i in 0..<count { try tx.insert("Folder", ["name": .string("r\(round)-\(i)")]) }
            }
        }
        // 68 versions replaced, 4 pushed out: versions 0 and 2 by big commits (rounds 0 and 2), 1 and 3 by one insert.
        #expect(store.reclaimer.overflowVersions == [0, 2])
        #expect(store.reclaimer.keptCount == VersionReclaimer.limit)
    }

    /// What `dispose` is given is freed later on the reclaimer's queue, not on the thread that gave it: a big
    /// transaction's rows are not freed on the path that returns its commit.
    @Test func disposedValuesAreFreedOnTheReclaimersQueueAfterTheDelay() async throws {
        final class Outcome: Sendable { let freedElsewhere = Mutex<Bool?>(nil) }
        final class Witness: Sendable {
            let creator = pthread_self()
            let outcome: Outcome
            init(_ outcome: Outcome) { self.outcome = outcome }
            deinit {
                let elsewhere = pthread_equal(pthread_self(), creator) == 0
                outcome.freedElsewhere.locked { $0 = elsewhere }
            }
        }
        let reclaimer = VersionReclaimer()
        let outcome = Outcome()
        // Built, handed over and dropped on one thread, so that thread would free it without the reclaimer.
        let handedOver: @Sendable () -> Void = { reclaimer.dispose([Witness(outcome), Witness(outcome)]) }
        handedOver()
        #expect(outcome.freedElsewhere.locked { $0 } == nil)  // held for the delay
        #expect(eventually { outcome.freedElsewhere.locked { $0 } != nil }, "never freed")
        #expect(outcome.freedElsewhere.locked { $0 } == true)
    }
}

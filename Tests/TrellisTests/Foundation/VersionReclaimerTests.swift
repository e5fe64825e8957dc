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
        // 102 replaced versions: 64 kept, 38 pushed out, of which one batch of 32 went to the queue at once.
        #expect(store.reclaimer.overflowCount == 102 - VersionReclaimer.limit - VersionReclaimer.overflowBatch)

        // Released by the timer after the grace period: waited for with a limit that fails the test.
        let released = eventually { store.reclaimer.keptCount == 0 && store.reclaimer.overflowCount == 0 }
        #expect(released, "kept \(store.reclaimer.keptCount), overflow \(store.reclaimer.overflowCount)")
    }

    /// Closing a store lets every kept version go at once, on the closing thread: a kept version shares most of its
    /// nodes with the published one, and left to the timer the whole graph was freed on the queue's thread up to a
    /// second later, while the caller was already opening the store again.
    @Test func closingTheStoreReleasesKeptVersionsAtOnce() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        for i in 0..<100 { try store.write { tx in try tx.insert("Folder", ["name": .string("f\(i)")]) } }
        #expect(store.reclaimer.keptCount == VersionReclaimer.limit)
        #expect(store.reclaimer.overflowCount > 0)
        try store.close()
        #expect(store.reclaimer.keptCount == 0)
        #expect(store.reclaimer.overflowCount == 0)
        #expect(store.snapshot.count(entity: 0) == 100, "the published version stays readable")
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

import Foundation
import Synchronization
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

@Suite struct VersionReclaimerTests {
    /// Whether less than the grace period has passed since `start`, so that the reclaimer's timer cannot have let
    /// anything go yet: counts that the timer would lower are checked only then (a slow machine, such as a run under
    /// ThreadSanitizer, can take longer than the grace period over a test's commits).
    static func beforeTheTimer(_ start: DispatchTime) -> Bool {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9 < VersionReclaimer.grace * 0.9
    }

    /// Each commit hands the version it replaced to the reclaimer, which keeps at most `limit` of them and lets them
    /// all go on its own queue after the grace period: a reader dropping the version it read is not the last holder,
    /// so it never pays for freeing what a big commit replaced.
    @Test func replacedVersionsAreKeptForTheGracePeriodThenReleased() async throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        #expect(store.reclaimer.keptCount == 0)
        let start = DispatchTime.now()
        let root = try Fixtures.folderTree(in: store, fanOut: 10, depth: 4)
        let beforeDelete = store.snapshot
        try store.write { tx in try tx.delete(root) }
        if Self.beforeTheTimer(start) {
            #expect(store.reclaimer.keptCount == 2)
            #expect(store.reclaimer.keptVersions.last == beforeDelete.sequence)
        }

        for i in 0..<100 { try store.write { tx in try tx.insert("Folder", ["name": .string("f\(i)")]) } }
        if Self.beforeTheTimer(start) {
            #expect(store.reclaimer.keptCount == VersionReclaimer.limit)
            #expect(store.reclaimer.keptVersions.last == store.snapshot.sequence - 1)
            // 102 replaced versions: 64 kept, 38 pushed out. The two that big commits replaced (the empty store, by
            // the tree's 1,111 inserts; the tree, by the cascade) wait for the queue; the 36 that one insert each
            // replaced were let go at once.
            #expect(store.reclaimer.overflowVersions == [0, 1])
        }

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
        let start = DispatchTime.now()
        _ = try Fixtures.folderTree(in: store, fanOut: 10, depth: 4)
        for i in 0..<100 { try store.write { tx in try tx.insert("Folder", ["name": .string("f\(i)")]) } }
        if Self.beforeTheTimer(start) {
            #expect(store.reclaimer.keptCount == VersionReclaimer.limit)
            #expect(store.reclaimer.overflowCount == 1)
        }
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
        let start = DispatchTime.now()
        try store.write { tx in try tx.insert("Folder", ["name": .string("first")]) }
        let kept = store.snapshot
        let burst = VersionReclaimer.limit + 3 * VersionReclaimer.overflowBatch
        for i in 0..<burst { try store.write { tx in try tx.insert("Folder", ["name": .string("f\(i)")]) } }
        // Nothing waits for the queue (the timer only ever empties it further).
        #expect(store.reclaimer.overflowCount == 0)
        if Self.beforeTheTimer(start) {
            #expect(store.reclaimer.keptCount == VersionReclaimer.limit)
            #expect(store.reclaimer.keptVersions.first == store.snapshot.sequence - UInt64(VersionReclaimer.limit))
        }
        #expect(kept.count(entity: 0) == 1)
        #expect(store.snapshot.count(entity: 0) == burst + 1)
    }

    /// Versions that big commits replaced still go to the queue when the limit pushes them out, small ones or not
    /// around them, and a small one comes back to the thread that retired it: the committing thread does not free
    /// what a big commit copied. A standalone reclaimer, given versions directly, so the grace timer cannot fire
    /// before the checks.
    @Test func bigVersionsPushedOutByTheLimitGoToTheQueue() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        var versions = [store.snapshot]
        for i in 0..<VersionReclaimer.limit + 4 {
            try store.write { tx in try tx.insert("Folder", ["name": .string("f\(i)")]) }
            versions.append(store.snapshot)
        }
        let reclaimer = VersionReclaimer()
        var letGo: [UInt64] = []
        for (i, version) in versions.dropLast().enumerated() {
            // Versions 0 and 2 were replaced by big commits, the others by one change.
            let changes = i == 0 || i == 2 ? VersionReclaimer.freedInlineBelow : 1
            if let back = reclaimer.retire(version, replacedBy: changes) { letGo.append(back.sequence) }
        }
        // 68 retired, 4 pushed out: the big ones wait for the queue, the small ones came back.
        #expect(reclaimer.overflowVersions == [0, 2])
        #expect(letGo == [1, 3])
        #expect(reclaimer.keptVersions == Array(4..<68))
        // The next one pushes out version 4, which one change replaced: it comes back.
        #expect(reclaimer.retire(versions[68], replacedBy: .max)?.sequence == 4)
        #expect(reclaimer.overflowVersions == [0, 2])
        reclaimer.drain()
    }

    /// A delete counts the targets it unlinked: a tag on 300 notes (nullify) wrote 301 objects, so the version it
    /// replaced is not handed back to the committing thread when pushed out.
    @Test func aDeleteCountsTheObjectsItUnlinked() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        let start = DispatchTime.now()
        let tag = try store.write { tx -> ObjectID in
            let tag = try tx.insert("Tag", ["label": "t"])
            for i in 0..<300 { try tx.link(try tx.insert("Note", ["title": .string("n\(i)")]), "tags", tag) }
            return tag
        }
        let before = store.snapshot
        var tx = store.transaction()
        try tx.delete(tag)
        let commit = try store.commit(tx)
        #expect(commit.changes.deletes.count == 1)
        #expect(commit.changes.footprint(upTo: .max) >= 301)
        #expect(commit.changes.footprint(upTo: VersionReclaimer.freedInlineBelow) >= VersionReclaimer.freedInlineBelow)
        for i in 0..<VersionReclaimer.limit {
            try store.write { tx in try tx.insert("Folder", ["name": .string("f\(i)")]) }
        }
        // Pushed out: the empty store (replaced by 601 changes) and the tagged notes (by the delete).
        if Self.beforeTheTimer(start) {
            #expect(store.reclaimer.overflowVersions == [before.sequence - 1, before.sequence])
        }
    }

    /// A cascade big enough that its deletes are recorded as rows counts their targets as the built arrays do.
    @Test func aCascadeRecordedAsRowsCountsTheSameTargets() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        let root = try Fixtures.folderTree(in: store, fanOut: 10, depth: 4)
        var tx = store.transaction()
        try tx.delete(root)
        let changes = try store.commit(tx).changes
        #expect(changes.deletes.count == 1_111 && changes.deletes.count >= DeletedRow.recordedFrom)
        let built = changes.deletes.reduce(0) { $0 + $1.relationships.reduce(0) { $0 + $1.count } }
        // Each folder but the root has a parent; each but the leaves, ten children.
        #expect(built == 1_110 + 111 * 10)
        #expect(changes.footprint(upTo: .max) == changes.changeCount + built)
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

import Foundation
import Synchronization
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisJournal
@testable import TrellisStore

/// What the journal's inbox holds of the commits it queues. Without per-commit durability the flusher needs only the
/// newest version written (compaction checkpoints it), so the entries before it drop their commits as the next one
/// is queued: the flusher never holds the last reference to a version the store has replaced, and the committing
/// thread, not the flusher, frees what its small commits copied.
@Suite struct QueuedCommitsTests {
    static let schema = try! Schema([EntityDescription("Note", attributes: [.init("n", .int)])])

    /// The commits queued in the inbox, oldest first: whether each entry still holds its commit.
    static func queued(_ store: Store) -> [Bool] {
        store.journal!.inbox.locked { $0.entries.map { $0.commit != nil } }
    }

    @Test func onlyTheNewestQueuedEntryKeepsItsCommitWithoutPerCommitDurability() throws {
        for durability in [StoreOptions.Durability.interval(60), .none] {
            let disk = SimulatedFileLayer()
            let store = try disk.open(Self.schema, disk.options(durability))
            var most = 0
            var commits = 0
            // The flusher takes the inbox 5 ms after its first entry; commits made meanwhile queue behind it.
            while most < 3 && commits < 2_000 {
                try store.write { tx in _ = try tx.insert("Note", ["n": .int(Int64(commits))]) }
                commits += 1
                let held = Self.queued(store)
                most = max(most, held.count)
                if let last = held.last {
                    #expect(last, "\(durability): the newest entry lost its commit")
                    #expect(held.dropLast().allSatisfy { !$0 }, "\(durability): older entries kept commits: \(held)")
                }
            }
            #expect(most >= 3, "\(durability): never saw three commits queued")
            // The flusher's newest version is the store's: a compaction checkpoints every commit.
            try store.flush()
            try store.compact()
            try store.close()
            let reopened = try disk.open(Self.schema, disk.options(durability))
            #expect(reopened.snapshot.count(entity: 0) == commits, "\(durability)")
            try reopened.close()
        }
    }

    @Test func everyQueuedEntryKeepsItsCommitWithPerCommitDurability() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open(Self.schema, disk.options(.perCommit))
        let observed = Mutex(0)
        let token = store.observe { _ in observed.locked { $0 += 1 } }
        // Saves from four threads, so that entries may wait in the inbox together; failures and entries seen without
        // their commits are counted here and checked after.
        let problems = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for i in 0..<50 {
                do {
                    try store.write { tx in _ = try tx.insert("Note", ["n": .int(Int64(thread * 100 + i))]) }
                } catch {
                    problems.locked { $0.append("save: \(error)") }
                }
                let held = Self.queued(store)
                if !held.allSatisfy({ $0 }) { problems.locked { $0.append("queued without commits: \(held)") } }
            }
        }
        #expect(problems.locked { $0 } == [])
        // Every commit was published to observers once durable, from its queued entry.
        #expect(observed.locked { $0 } == 200)
        token.cancel()
        try store.close()
        let reopened = try disk.open(Self.schema, disk.options(.perCommit))
        #expect(reopened.snapshot.count(entity: 0) == 200)
        try reopened.close()
    }
}

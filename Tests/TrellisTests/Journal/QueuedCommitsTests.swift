import Foundation
import Synchronization
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
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

    static func handOver(_ store: Store) -> Journal.HandOverCounts { store.journal!.inbox.locked { $0.handOver } }

    static func leftoversEmpty(_ store: Store) -> Bool { store.journal!.inbox.locked { $0.leftovers.isEmpty } }

    /// Whether `condition` holds within `seconds` (10 unless told).
    static func eventually(within seconds: Double = 10, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > end { return false }
            usleep(1_000)
        }
        return true
    }

    @Test func versionsTheFlusherWrotePastGoBackToTheNextSmallCommit() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open(Self.schema, disk.options(.interval(60)))
        var commits = 0
        // The flusher writes a batch 5 ms after its first record, then hands back the version it had written last.
        let start = Date()
        while Self.handOver(store).takenByCommits < 3 && Date().timeIntervalSince(start) < 20 {
            try store.write { tx in _ = try tx.insert("Note", ["n": .int(Int64(commits))]) }
            commits += 1
        }
        let counts = Self.handOver(store)
        #expect(counts.takenByCommits >= 3, "\(counts) after \(commits) commits")
        #expect(counts.droppedAtOnce == 0, "a one-object commit's batch was freed on the flusher: \(counts)")
        // Without further commits, the flusher drops what it handed back itself.
        #expect(
            Self.eventually {
                Self.leftoversEmpty(store)
                    && Self.handOver(store).handedBack == Self.handOver(store).takenByCommits
                        + Self.handOver(store).droppedIdle
            })
        try store.flush()
        try store.close()
        let reopened = try disk.open(Self.schema, disk.options(.interval(60)))
        #expect(reopened.snapshot.count(entity: 0) == commits)
        try reopened.close()
    }

    @Test func aBigCommitsBatchIsFreedOnTheFlusher() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open(Self.schema, disk.options(.interval(60)))
        for round in 0..<4 {
            try store.write { tx in
                for i in 0..<ChangeSet.freedInlineBelow {
                    _ = try tx.insert("Note", ["n": .int(Int64(round * 1_000 + i))])
                }
            }
            try store.flush()
            // The counts move just after the flush's ticket completes.
            #expect(Self.eventually { Self.handOver(store).droppedAtOnce == round + 1 }, "\(Self.handOver(store))")
        }
        #expect(Self.handOver(store).handedBack == 0)
        #expect(Self.leftoversEmpty(store))
        try store.close()
        let reopened = try disk.open(Self.schema, disk.options(.interval(60)))
        #expect(reopened.snapshot.count(entity: 0) == 4 * ChangeSet.freedInlineBelow)
        try reopened.close()
    }

    @Test func closeDropsWhatWasHandedBack() throws {
        // Close after a hand-back, before the idle drop: the flusher drops the leftovers as it closes. The idle drop
        // waits 20 ms in a store; here 60 s, so that a loaded machine between the hand-back and close cannot let it
        // come first. Each commit waits for the flusher's hand-back before the next one, which would take the
        // leftovers itself (on a loaded machine every try of a tight loop of commits did); a run where a commit
        // still took them is tried again.
        var droppedAtClose = 0
        for _ in 0..<5 where droppedAtClose == 0 {
            let disk = SimulatedFileLayer()
            let store = try disk.open(Self.schema, disk.options(.none))
            store.journal!.inbox.locked { $0.leftoversKeptFor = 60 }
            var commits = 0
            let start = Date()
            while Self.handOver(store).handedBack < 1 && Date().timeIntervalSince(start) < 20 {
                try store.write { tx in _ = try tx.insert("Note", ["n": .int(Int64(commits))]) }
                commits += 1
                _ = Self.eventually(within: 1) { Self.handOver(store).handedBack >= 1 }
            }
            #expect(Self.handOver(store).handedBack >= 1)
            try store.close()
            #expect(Self.leftoversEmpty(store), "nothing handed back outlives close")
            let counts = Self.handOver(store)
            #expect(
                counts.handedBack == counts.takenByCommits + counts.droppedIdle + counts.droppedAtClose, "\(counts)")
            droppedAtClose += counts.droppedAtClose
            let reopened = try disk.open(Self.schema, disk.options(.none))
            #expect(reopened.snapshot.count(entity: 0) == commits)
            try reopened.close()
        }
        #expect(droppedAtClose >= 1, "close dropped what the flusher had handed back")
    }

    static func committersTurns(_ store: Store) -> Int { store.journal!.inbox.locked { $0.committersTurns } }

    @Test func aDurableCommitWritesItsOwnRecordWhenTheFlusherHasNotTakenIt() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open(Self.schema, disk.options(.perCommit))
        let sequences = Mutex<[UInt64]>([])
        let token = store.observe { commit in sequences.locked { $0.append(commit.sequence) } }
        for i in 0..<200 {
            try store.write { tx in _ = try tx.insert("Note", ["n": .int(Int64(i))]) }
            // Durable and published when the save returns, whichever thread wrote it.
            #expect(store.snapshot.count(entity: 0) == i + 1)
        }
        // The committing thread gets to the turn before the flusher wakes, mostly; one is enough to prove the path.
        #expect(Self.committersTurns(store) > 0)
        #expect(sequences.locked { $0 } == Array(1...200))
        token.cancel()
        try store.close()
        let reopened = try disk.open(Self.schema, disk.options(.perCommit))
        #expect(reopened.snapshot.count(entity: 0) == 200)
        try reopened.close()
    }

    @Test func bigDurableCommitsAreLeftToTheFlusher() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open(Self.schema, disk.options(.perCommit))
        for round in 0..<4 {
            try store.write { tx in
                for i in 0..<ChangeSet.freedInlineBelow {
                    _ = try tx.insert("Note", ["n": .int(Int64(round * 1_000 + i))])
                }
            }
            #expect(store.snapshot.count(entity: 0) == (round + 1) * ChangeSet.freedInlineBelow)
            // The flusher wrote it and freed what it replaced; the counts move just after the save returns.
            #expect(Self.eventually { Self.handOver(store).droppedAtOnce == round + 1 }, "\(Self.handOver(store))")
        }
        #expect(Self.committersTurns(store) == 0)
        #expect(Self.handOver(store).handedBack == 0)
        try store.close()
        let reopened = try disk.open(Self.schema, disk.options(.perCommit))
        #expect(reopened.snapshot.count(entity: 0) == 4 * ChangeSet.freedInlineBelow)
        try reopened.close()
    }

    @Test func concurrentDurableCommitsReachTheJournalInSequenceOrder() throws {
        let temporary = TemporaryDirectory()
        // Small segments, rotated by whichever thread has the turn.
        let options = StoreOptions(durability: .perCommit, compaction: .manual, segmentBytes: 4096)
        let store = try Store(directory: temporary.store, schema: Self.schema, options: options)
        let sequences = Mutex<[UInt64]>([])
        let token = store.observe { commit in sequences.locked { $0.append(commit.sequence) } }
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for i in 0..<100 {
                do {
                    try store.write { tx in _ = try tx.insert("Note", ["n": .int(Int64(thread * 1_000 + i))]) }
                } catch {
                    failures.locked { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.locked { $0 } == [])
        #expect(sequences.locked { $0 } == Array(1...400))
        #expect(Self.committersTurns(store) > 0)
        token.cancel()
        let rotated = store.journal!.files.locked { $0.manifest.lastSegment - $0.manifest.firstSegment }
        #expect(rotated > 3, "the segments were not rotated: \(rotated)")
        try store.close()
        let verification = try JournalReader(directory: temporary.store).verify()
        #expect(verification.problems == [])
        #expect(verification.lastSequence == 400)
        let reopened = try Store(directory: temporary.store, schema: Self.schema, options: options)
        #expect(reopened.snapshot.count(entity: 0) == 400)
        try reopened.close()
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
        // Durable small commits' entries are freed by the committing threads: after their own turns, or handed back
        // by the flusher once acknowledged; none on the flusher.
        let counts = Self.handOver(store)
        #expect(counts.droppedAtOnce == 0, "\(counts)")
        // Small durable commits wake no flusher: their own threads take the turn (several records a turn when the
        // threads' commits queue together), so at least one turn was a committer's and there were at most 200.
        let turns = Self.committersTurns(store)
        #expect(turns >= 1 && turns <= 200, "\(turns) committers' turns, \(counts)")
        token.cancel()
        try store.close()
        // Whatever the flusher handed back was taken by a commit or dropped by the flusher, none twice.
        let closed = Self.handOver(store)
        #expect(closed.handedBack == closed.takenByCommits + closed.droppedIdle + closed.droppedAtClose, "\(closed)")
        #expect(Self.leftoversEmpty(store))
        let reopened = try disk.open(Self.schema, disk.options(.perCommit))
        #expect(reopened.snapshot.count(entity: 0) == 200)
        try reopened.close()
    }
}

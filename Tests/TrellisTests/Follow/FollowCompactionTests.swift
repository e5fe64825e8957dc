import Foundation
import Synchronization
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Issue 18: a follower and the writer's compaction, step by step. The follower here moves only when the test calls
/// `catchUp()` (no notifications, a timer far away), so each compaction lands exactly where the test puts it.
@Suite struct FollowCompactionTests {
    static func pausedFollower(_ directory: URL) throws -> Store {
        var options = StoreOptions.follower
        options.followNotifications = false
        options.followPollInterval = 3_600
        let store = try Store(directory: directory, schema: CrashWorkload.schema, options: options)
        // The thread's first step reads what is durable whenever the thread first runs: wait for it, so that from
        // here on the follower reads only when the test calls `catchUp()`.
        #expect(eventually(within: 60) { (store.follower?.stepsTaken ?? 0) >= 1 })
        return store
    }

    @Test("a compaction that removes the segment a follower is reading takes nothing from it: no gap, no repeat")
    func compactionRemovingTheSegmentBeingReadLosesNothing() throws {
        let temporary = TemporaryDirectory()
        let directory = temporary.store
        let writer = try Store(
            directory: directory, schema: CrashWorkload.schema, options: StoreOptions(compaction: .manual))
        let follower = try Self.pausedFollower(directory)
        let seen = SeenCommits()
        let token = FollowCrossProcessTests.observe(follower, into: seen)
        defer { token.cancel() }

        for n in 1...30 { try CrashWorkload.commit(n, to: writer) }
        #expect(try follower.catchUp() == 30)
        for n in 31...60 { try CrashWorkload.commit(n, to: writer) }
        // Records 31...60 are in segment 1, which the compaction replaces by a checkpoint and removes.
        try writer.compact()
        for n in 61...80 { try CrashWorkload.commit(n, to: writer) }
        let segmentOne = directory.appendingPathComponent(JournalFormat.segmentName(1)).path
        #expect(!FileManager.default.fileExists(atPath: segmentOne))
        #expect(try follower.catchUp() == 80)
        #expect(seen.sequences == Array(1...80))
        #expect(seen.problems.isEmpty, "\(seen.problems.prefix(5))")
        #expect(follower.snapshot.differences(from: writer.snapshot).isEmpty)
        // A follower opened now starts from the checkpoint.
        let late = try Self.pausedFollower(directory)
        #expect(late.snapshot.sequence == 80 && late.snapshot.differences(from: writer.snapshot).isEmpty)
        try writer.close()
    }

    @Test("a follower that slept through a whole compaction jumps to the new checkpoint and goes on")
    func aFollowerThatSleptThroughACompactionJumps() throws {
        let temporary = TemporaryDirectory()
        let directory = temporary.store
        let writer = try Store(
            directory: directory, schema: CrashWorkload.schema,
            options: StoreOptions(compaction: .manual, segmentBytes: 16_384))
        let follower = try Self.pausedFollower(directory)
        let published = Mutex<[Commit]>([])
        let token = follower.observe { commit in published.locked { $0.append(commit) } }
        defer { token.cancel() }
        for n in 1...10 { try CrashWorkload.commit(n, to: writer) }
        #expect(try follower.catchUp() == 10)
        // Rotations create segments the follower never sees before the compaction removes them.
        for n in 11...120 { try CrashWorkload.commit(n, to: writer) }
        try writer.compact()
        #expect(try follower.catchUp() == 120)
        #expect(follower.failure == nil && follower.isFollowing)
        #expect(follower.snapshot.differences(from: writer.snapshot).isEmpty)
        let commits = published.locked { $0 }
        #expect(commits.map(\.sequence) == Array(1...10) + [120])
        #expect(commits.last?.isRefresh == true && commits.last?.baseSequence == 10)
        #expect(commits.dropLast().allSatisfy { !$0.isRefresh })
        for n in 121...130 { try CrashWorkload.commit(n, to: writer) }
        #expect(try follower.catchUp() == 130)
        #expect(published.locked { $0 }.map(\.sequence).suffix(10) == Array(121...130))
        #expect(follower.snapshot.differences(from: writer.snapshot).isEmpty)
        try writer.close()
    }

    @Test(
        "a follower's commits carry the time their records store (the writer's commit time), not the time it read them")
    func aFollowersCommitTimeIsTheRecordsTime() throws {
        let temporary = TemporaryDirectory()
        let directory = temporary.store
        let writer = try Store(
            directory: directory, schema: CrashWorkload.schema, options: StoreOptions(compaction: .manual))
        let follower = try Self.pausedFollower(directory)
        let published = Mutex<[Commit]>([])
        let token = follower.observe { commit in published.locked { $0.append(commit) } }
        defer { token.cancel() }
        var made: [Date] = []
        for n in 1...5 { made.append(try CrashWorkload.commit(n, to: writer).time) }
        let written = try writer.history().map(\.time)
        #expect(written == made)
        #expect(try follower.catchUp() == 5)
        #expect(published.locked { $0 }.map(\.time) == made)
        try writer.close()
    }

    @Test(
        "a follower's history feed goes on across a jump: the commits it did not read one by one come from the retained history, in order; without them the feed ends with historyCompacted",
        arguments: [true, false])
    func aFollowersHistoryFeedGoesOnAcrossAJump(retained: Bool) async throws {
        let temporary = TemporaryDirectory()
        let directory = temporary.store
        var options = StoreOptions(compaction: .manual, segmentBytes: 16_384)
        options.history = retained ? .commits(1_000) : .none
        let writer = try Store(directory: directory, schema: CrashWorkload.schema, options: options)
        for n in 1...10 { try CrashWorkload.commit(n, to: writer) }
        let follower = try Self.pausedFollower(directory)
        var entries = follower.historyUpdates(since: HistoryToken(sequence: 0, storeID: try writer.historyStoreID()))
            .makeAsyncIterator()
        for n in 1...10 { #expect(try await entries.next()?.sequence == UInt64(n)) }
        for n in 11...120 { try CrashWorkload.commit(n, to: writer) }
        try writer.compact()
        #expect(try follower.catchUp() == 120)
        if retained {
            var sequences: [UInt64] = []
            var titles: [Value] = []
            for _ in 11...120 {
                let entry = try #require(try await entries.next())
                sequences.append(entry.sequence)
                titles.append(
                    entry.changes.first { $0.kind == .insert && $0.entityName == "Item" }?.newValue("title") ?? .null)
            }
            #expect(sequences == Array(11...120))
            #expect(titles == (11...120).map { .string("item \($0)") })
            for n in 121...125 { try CrashWorkload.commit(n, to: writer) }
            #expect(try follower.catchUp() == 125)
            for n in 121...125 { #expect(try await entries.next()?.sequence == UInt64(n)) }
        } else {
            let error = await #expect(throws: TrellisError.self) { _ = try await entries.next() }
            #expect(error?.code == .historyCompacted)
        }
        try writer.close()
    }

    @Test("a follower refuses commits, also when `follow` was set after the options were made")
    func aFollowerRefusesCommits() throws {
        let temporary = TemporaryDirectory()
        let directory = temporary.store
        try Store(directory: directory, schema: CrashWorkload.schema).close()
        var options = StoreOptions()
        options.follow = true
        let follower = try Store(directory: directory, schema: CrashWorkload.schema, options: options)
        #expect(follower.isReadOnly && follower.isFollowing)
        #expect(throws: TrellisError.self) { try CrashWorkload.commit(1, to: follower) }
        #expect(follower.snapshot.sequence == 0)
        try follower.close()
    }
}

import Foundation
import Synchronization
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

#if canImport(Glibc)
import Glibc
#endif

/// Issue 18, followers in other processes: a store opened with `.follower` in the test process follows a writer in
/// a child process (`trellis-crashtest run`), commit by commit, and never shows a commit that is not durable.
@Suite(.serialized) struct FollowCrossProcessTests {
    static let commits = 10_000

    /// Checks each commit the follower's observer gets: its number and the item the deterministic workload inserts.
    static func observe(_ store: Store, into seen: SeenCommits) -> ObservationToken {
        store.observe { commit in
            let n = Int(commit.sequence)
            let title = try? commit.snapshot.value(CrashWorkload.item(n), "title")
            let problem =
                title == .string("item \(n)") ? nil : "commit \(n) holds item \(n) as \(String(describing: title))"
            seen.record(commit.sequence, problem: problem)
        }
    }

    @Test(
        "a follower sees each of 10,000 commits of another process once, in order, across a compaction, a SIGKILL and a restart, and never one the kill lost"
    )
    func followsEveryCommitAcrossCompactionKillAndRestart() throws {
        let temporary = TemporaryDirectory()
        let directory = temporary.store
        try Store(directory: directory, schema: CrashWorkload.schema).close()
        let follower = try Store(directory: directory, schema: CrashWorkload.schema, options: .follower)
        #expect(follower.isFollowing && follower.isReadOnly)
        let seen = SeenCommits()
        let token = Self.observe(follower, into: seen)
        defer { token.cancel() }

        var random = SeededRandom(seed: 18)
        let killAt = UInt64(3_000 + random.next() % 4_000)
        // Compactions at 2,500 and 5,000 (so at least one before the kill) and in the restarted run.
        let arguments = ["run", "--dir", directory.path, "--commits", "\(Self.commits)", "--compact-every", "2500"]
        let first = try FollowChild(arguments + ["--times"])
        #expect(eventually(within: 600) { seen.last >= killAt || first.isFinished })
        first.kill()
        #expect(!first.lines.contains { $0.hasPrefix("closed") }, "the writer finished before the kill")
        #expect(first.lines.contains("compacted 2500"))
        // Everything the follower can ever see of the first writer, it sees now.
        let shown = try follower.catchUp()
        #expect(shown >= killAt)

        // The restart recovers (dropping any torn tail) and goes on to the end.
        let restart = try FollowChild(arguments + ["--times"])
        #expect(restart.waitForExit(within: 600))
        let recovered = try #require(restart.opened)
        #expect(recovered >= shown, "the follower showed record \(shown); recovery kept only \(recovered)")
        #expect(restart.lines.last == "closed \(Self.commits)")
        #expect(eventually(within: 60) { seen.last >= UInt64(Self.commits) })

        #expect(seen.sequences == Array(1...UInt64(Self.commits)), "not every commit once, in order")
        #expect(seen.problems.isEmpty, "\(seen.problems.prefix(5))")
        #expect(follower.failure == nil)
        let replay = Store(schema: CrashWorkload.schema)
        for n in 1...Self.commits { try CrashWorkload.commit(n, to: replay) }
        #expect(follower.snapshot.differences(from: replay.snapshot).isEmpty)

        let latencies = seen.latencies(first.acks + restart.acks)
        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").first ?? "?"
        print(
            "follow latency (save() returned in the writer -> the follower's observer): "
                + "\(SeenCommits.summary(latencies)); load average \(load)")
        try follower.close()
        #expect(!follower.isFollowing)
    }

    @Test(
        "a follower shows no commit the writer has not synced, even after a SIGKILL, until a restart makes it durable")
    func showsNoCommitBeforeItIsDurable() throws {
        let temporary = TemporaryDirectory()
        let directory = temporary.store
        try Store(directory: directory, schema: CrashWorkload.schema).close()
        let follower = try Store(directory: directory, schema: CrashWorkload.schema, options: .follower)
        let seen = SeenCommits()
        let token = Self.observe(follower, into: seen)
        defer { token.cancel() }

        // `.none` durability: the records are written (the page cache holds them) and never synced.
        let unsynced = try FollowChild(
            ["run", "--dir", directory.path, "--commits", "300", "--unsynced", "--hold"])
        #expect(eventually(within: 120) { unsynced.lines.contains("holding") })
        // The records are in the segment (a reader that ignores the mark reads them all) ...
        let reader = try JournalReader(directory: directory)
        #expect(
            try eventually(within: 10) {
                var records = 0
                _ = try reader.forEachRecord { _ in records += 1 }
                return records == 300
            })
        // ... and the follower shows none of them.
        #expect(try follower.catchUp() == 0)
        unsynced.kill()
        // The kill leaves the records whole in the page cache: still nothing is durable.
        #expect(try follower.catchUp() == 0)
        #expect(seen.sequences.isEmpty)

        // The restart's recovery syncs what it keeps, and from then on the follower shows it.
        let restart = try FollowChild(["run", "--dir", directory.path, "--commits", "310"])
        #expect(restart.waitForExit(within: 120))
        #expect(restart.opened == 300)
        #expect(eventually(within: 30) { seen.last == 310 })
        #expect(seen.sequences == Array(1...310))
        #expect(seen.problems.isEmpty, "\(seen.problems.prefix(5))")
    }

    @Test(
        "a follower that did not read while another process committed and compacted three times jumps, equals a fresh read-only open object for object, and goes on one commit at a time"
    )
    func aFollowerThatMissedCompactionsOfAnotherProcessJumps() throws {
        let temporary = TemporaryDirectory()
        let directory = temporary.store
        try Store(directory: directory, schema: CrashWorkload.schema).close()
        // Paused: it reads only when the test calls `catchUp()`, as a suspended app extension would.
        let follower = try FollowCompactionTests.pausedFollower(directory)
        let published = Mutex<[Commit]>([])
        let token = follower.observe { commit in published.locked { $0.append(commit) } }
        defer { token.cancel() }
        let arguments = ["run", "--dir", directory.path, "--compact-every", "100", "--segment-bytes", "16384"]
        let writer = try FollowChild(arguments + ["--commits", "300"])
        #expect(writer.waitForExit(within: 300))
        #expect(writer.lines.contains("compacted 300") && writer.lines.last == "closed 300")
        let segmentOne = directory.appendingPathComponent(JournalFormat.segmentName(1)).path
        #expect(!FileManager.default.fileExists(atPath: segmentOne))

        let clock = ContinuousClock()
        let started = clock.now
        #expect(try follower.catchUp() == 300)
        let took = clock.now - started
        #expect(follower.failure == nil && follower.isFollowing)
        print(
            "jump over 3 compactions to commit 300 (\(follower.snapshot.objectCount) objects; load, replay, "
                + "difference, publish): \(took)")
        let reopened = try Store(
            directory: directory, schema: CrashWorkload.schema, options: StoreOptions(readOnly: true))
        #expect(follower.snapshot.differences(from: reopened.snapshot).isEmpty)
        #expect(follower.snapshot.invariantViolations().isEmpty)
        try reopened.close()
        let jump = published.locked { $0 }
        #expect(jump.map(\.sequence) == [300] && jump.first?.isRefresh == true && jump.first?.baseSequence == 0)
        #expect(jump.first?.changes.inserts.count == follower.snapshot.objectCount)

        let more = try FollowChild(arguments + ["--commits", "340"])
        #expect(more.waitForExit(within: 300))
        #expect(more.lines.last == "closed 340")
        #expect(try follower.catchUp() == 340)
        let later = published.locked { $0 }.dropFirst()
        #expect(later.map(\.sequence) == Array(301...340) && later.allSatisfy { !$0.isRefresh })
        let replay = Store(schema: CrashWorkload.schema)
        for n in 1...340 { try CrashWorkload.commit(n, to: replay) }
        #expect(follower.snapshot.differences(from: replay.snapshot).isEmpty)
        try follower.close()
    }

    @Test(
        "a follower process stopped (SIGSTOP) while another process commits and compacts three times jumps by itself when resumed, shows what a fresh open shows, and goes on"
    )
    func aStoppedFollowerProcessJumpsWhenResumed() throws {
        let temporary = TemporaryDirectory()
        let directory = temporary.store
        try Store(directory: directory, schema: CrashWorkload.schema).close()
        let follower = try FollowChild(["follow", "--dir", directory.path, "--commits", "340"])
        #expect(eventually(within: 120) { follower.lines.contains("following 0") || follower.isFinished })
        #expect(Glibc.kill(follower.process.processIdentifier, SIGSTOP) == 0)
        let arguments = ["run", "--dir", directory.path, "--compact-every", "100", "--segment-bytes", "16384"]
        let writer = try FollowChild(arguments + ["--commits", "300"])
        #expect(writer.waitForExit(within: 300))
        #expect(writer.lines.contains("compacted 300") && writer.lines.last == "closed 300")
        #expect(follower.lines.last == "following 0", "the follower read while it was stopped")
        #expect(Glibc.kill(follower.process.processIdentifier, SIGCONT) == 0)
        // Woken by the events queued while it was stopped, it jumps to the checkpoint of commit 300.
        #expect(eventually(within: 120) { follower.lines.contains("refresh 0 300") || follower.isFinished })

        let more = try FollowChild(arguments + ["--commits", "340"])
        #expect(more.waitForExit(within: 300))
        #expect(follower.waitForExit(within: 120))
        let lines = follower.lines
        let published = lines.filter { $0.hasPrefix("commit ") || $0.hasPrefix("refresh ") }
        #expect(published == ["refresh 0 300"] + (301...340).map { "commit \($0)" })
        let reopened = try Store(
            directory: directory, schema: CrashWorkload.schema, options: StoreOptions(readOnly: true))
        #expect(reopened.snapshot.sequence == 340)
        #expect(lines.contains("digest \(FollowerCommand.digest(of: reopened.snapshot))"))
        #expect(lines.last == "closed 340")
        try reopened.close()
    }

    @Test("a follower that is not notified (no inotify) follows by its timer")
    func followsByTimerWithoutNotifications() throws {
        let temporary = TemporaryDirectory()
        let directory = temporary.store
        try Store(directory: directory, schema: CrashWorkload.schema).close()
        var options = StoreOptions.follower
        options.followNotifications = false
        options.followPollInterval = 0.01
        let follower = try Store(directory: directory, schema: CrashWorkload.schema, options: options)
        let seen = SeenCommits()
        let token = Self.observe(follower, into: seen)
        defer { token.cancel() }
        let writer = try FollowChild(["run", "--dir", directory.path, "--commits", "200", "--times"])
        #expect(writer.waitForExit(within: 120))
        #expect(eventually(within: 30) { seen.last == 200 })
        #expect(seen.sequences == Array(1...200))
        #expect(seen.problems.isEmpty, "\(seen.problems.prefix(5))")
        print("follow latency by timer (10 ms): \(SeenCommits.summary(seen.latencies(writer.acks)))")
    }
}

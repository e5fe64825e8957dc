import Foundation
import Synchronization
import Trellis

/// F1's model: one small object a commit.
final class FollowItem: Model {
    @Attribute var n = 0
    @Attribute var title = ""
}

/// F1: a follower (`StoreOptions.follower`) of a writer committing 1,000 one-object transactions in `.perCommit`
/// durability, in this process (the follower reads the files and is woken by inotify, as in another process).
/// Measured: from `save()` returning to the follower's observer, against what an app does without a follower to see
/// a writer's newest commit (open the store read-only again); and the writer's commit time with a follower, against
/// the same commits before the follower opened.
extension BenchRun {
    func runFollow() throws {
        let commits = 1_000
        progress("F1 follower of \(commits) one-object durable commits")
        let dir = directory("f1")
        let url = URL(fileURLWithPath: dir)
        let writer = try Store(
            directory: url, models: [FollowItem.self], options: StoreOptions(compaction: .manual))
        let alone = try Self.commit(writer, commits) { _, _ in }
        let follower = try Store(directory: url, models: [FollowItem.self], options: .follower)
        let seen = Mutex<[UInt64: UInt64]>([:])
        let token = follower.observe { commit in
            let now = Measure.now()
            seen.locked { $0[commit.sequence] = now }
        }
        var returned: [UInt64: UInt64] = [:]
        let withFollower = try Self.commit(writer, commits) { sequence, time in returned[sequence] = time }
        // The last commits reach the follower within milliseconds; the wait is bounded.
        let deadline = Measure.now() + 10_000_000_000
        while seen.locked({ $0.count }) < commits && Measure.now() < deadline { sched_yield() }
        token.cancel()
        let arrived = seen.locked { $0 }
        let follow = returned.compactMap { sequence, time in
            arrived[sequence].map { Double(Int64(bitPattern: $0 &- time)) / 1_000 }
        }
        checks.expect("F1", follow.count == commits, "the follower saw \(follow.count) of \(commits) commits")
        checks.expect(
            "F1", follower.snapshot.sequence == writer.snapshot.sequence,
            "the follower shows \(follower.snapshot.sequence), the writer \(writer.snapshot.sequence)")
        var reopen: [Double] = []
        for _ in 0..<20 {
            let (store, ms) = try Measure.milliseconds {
                try Store(directory: url, models: [FollowItem.self], options: StoreOptions(readOnly: true))
            }
            checks.expect("F1", store.snapshot.sequence == writer.snapshot.sequence, "a read-only reopen is behind")
            reopen.append(ms * 1_000)
        }
        try follower.close()
        try writer.close()
        try? FileManager.default.removeItem(atPath: dir)
        let p = { (values: [Double], q: Double) in Measure.quantile(values, q) }
        figures.add(
            "F1", "follow_p50_us", "µs", .lower, trellis: p(follow, 0.5), sqlite: p(reopen, 0.5),
            peer: "reopen read-only")
        figures.add(
            "F1", "follow_p99_us", "µs", .lower, trellis: p(follow, 0.99), sqlite: p(reopen, 0.99),
            peer: "reopen read-only")
        figures.add(
            "F1", "commit_p50_us", "µs", .lower, trellis: p(withFollower, 0.5), sqlite: p(alone, 0.5),
            peer: "no follower")
    }

    /// Commits `count` one-object transactions; returns each commit's microseconds and tells `returned` the sequence
    /// number and the monotonic time each returned.
    private static func commit(
        _ store: Store, _ count: Int, returned: (UInt64, UInt64) -> Void
    ) throws -> [Double] {
        var micros: [Double] = []
        micros.reserveCapacity(count)
        for i in 0..<count {
            let start = Measure.now()
            let commit = try store.commit(
                {
                    var tx = store.transaction()
                    _ = try tx.insert("FollowItem", ["n": .int(Int64(i)), "title": .string("item \(i)")])
                    return tx
                }())
            let end = Measure.now()
            returned(commit.sequence, end)
            micros.append(Double(end - start) / 1_000)
        }
        return micros
    }
}

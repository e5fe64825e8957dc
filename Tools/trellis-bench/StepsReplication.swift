import Foundation
import Synchronization
import Trellis
import TrellisNATSServer
import TrellisReplication

/// R1's lag model: one small object a commit.
final class ReplicatedItem: Model {
    @Attribute var n = 0
    @Attribute var title = ""
}

/// R1: replication through NATS JetStream (issue 20), against a `nats-server -js` the step starts on a free port of
/// 127.0.0.1 with a store directory of its own, and stops at the end (without the binary the step is skipped).
///
/// (a) Lag: a writer commits one-object transactions in `.perCommit` durability at a steady 1,000 a second (10,000 at
/// scale 1 and above, fewer below); its `ReplicationPublisher` publishes them; a `Replica` in this process, with its own
/// directory and its own NATS connections, applies them. Measured per commit: from `commit` (`save()`) returning to
/// the replica's store (`Replica.store`, what its view context reads) publishing that commit to its observers; and from
/// `commit` returning to the publisher's `publishedSequence`, and to the replica's `appliedSequence` (its local store,
/// before its read-only store catches up), reaching it (both sampled every 0.2 ms).
///
/// (b) Bootstrap: a store of N workload items (1,000,000 at scale 10) committed in batches, compacted (the publisher
/// puts the checkpoint in the object store), then 1,000 one-item updates after the checkpoint. A new replica in an
/// empty directory (checkpoint object, then the records after it, until its store shows the last) against opening
/// the writer's own directory again (checkpoint file plus the same records).
extension BenchRun {
    func runReplication() throws {
        guard FileManager.default.isExecutableFile(atPath: NATSServerProcess.binary) else {
            progress("R1 skipped: \(NATSServerProcess.binary) is missing (apt-get install nats-server)")
            figures.add("R1", "skipped: no \(NATSServerProcess.binary)", "", .lower, trellis: nil, sqlite: nil)
            return
        }
        let server = try NATSServerProcess(storeDirectory: URL(fileURLWithPath: directory("r1-nats")))
        try server.start()
        defer {
            try? server.stop()
            try? FileManager.default.removeItem(at: server.storeDirectory)
        }
        try replicationLag(url: server.url)
        try replicationBootstrap(url: server.url)
    }

    /// Commits in R1's lag part: 10,000 (ten seconds at 1,000 a second) at scale 1 and above, at least 1,000.
    private var lagCommits: Int { min(10_000, max(1_000, Int((10_000 * options.scale).rounded()))) }

    private func replicationLag(url: String) throws {
        let commits = lagCommits
        let rate = 1_000.0
        progress("R1 replication lag: \(commits) one-object durable commits at \(Int(rate)) a second")
        let writerDir = directory("r1-writer")
        let replicaDir = directory("r1-replica")
        defer {
            try? FileManager.default.removeItem(atPath: writerDir)
            try? FileManager.default.removeItem(atPath: replicaDir)
        }
        let writer = try Store(
            directory: URL(fileURLWithPath: writerDir), models: [ReplicatedItem.self],
            options: StoreOptions(compaction: .manual))
        let publisher = try ReplicationPublisher(store: writer, url: url, name: "r1lag")
        publisher.start()
        defer { publisher.stop() }
        // A first commit puts the schema on the server, which a new replica reads.
        try writer.write { tx in _ = try tx.insert("ReplicatedItem", ["n": .int(0), "title": .string("first")]) }
        guard publisher.waitUntilPublished(1, timeout: .seconds(30)) else {
            throw BenchError("R1: the publisher did not publish the first record: \(publisher.lastError ?? "?")")
        }
        let replica = try Replica(url: url, name: "r1lag", directory: URL(fileURLWithPath: replicaDir))
        replica.start()
        defer { replica.stop() }
        guard replica.waitUntilApplied(1, timeout: .seconds(30)) else {
            throw BenchError(
                "R1: the replica did not apply the first record: \(replica.failure.map { "\($0)" } ?? "?")")
        }
        let seen = SequenceTimes()
        let token = replica.store.observe { commit in seen.set(commit.sequence...commit.sequence, Measure.now()) }
        defer { token.cancel() }
        let returned = SequenceTimes()
        let published = SequenceTimes()
        let applied = SequenceTimes()
        let sampled = DispatchSemaphore(value: 0)
        // The publisher's and the replica's progress, sampled: each record's time is when `publishedSequence` (or
        // `appliedSequence`) was first seen past it.
        let sampler = Thread {
            var last: UInt64 = 1
            var lastApplied: UInt64 = 1
            while !published.finished {
                let now = publisher.publishedSequence
                if now > last {
                    published.set((last + 1)...now, Measure.now())
                    last = now
                }
                let nowApplied = replica.appliedSequence
                if nowApplied > lastApplied {
                    applied.set((lastApplied + 1)...nowApplied, Measure.now())
                    lastApplied = nowApplied
                }
                usleep(200)
            }
            sampled.signal()
        }
        sampler.start()
        let (began, ended) = try Self.pacedCommits(writer, count: commits, rate: rate, returned: returned)
        let last = writer.snapshot.sequence
        // The last commits reach the replica within a second or so; the wait is bounded.
        let deadline = Measure.now() + 60_000_000_000
        while seen.all[last] == nil && replica.failure == nil && Measure.now() < deadline { usleep(1_000) }
        while publisher.publishedSequence < last && Measure.now() < deadline { usleep(1_000) }
        usleep(1_000)
        published.finish()
        sampled.wait()
        let times = returned.all
        let arrived = seen.all
        let sent = published.all
        let reached = applied.all
        let lag = times.compactMap { sequence, time in
            arrived[sequence].map { Double(Int64(bitPattern: $0 &- time)) / 1e6 }
        }
        let publishLag = times.compactMap { sequence, time in
            sent[sequence].map { Double(Int64(bitPattern: $0 &- time)) / 1e6 }
        }
        let appliedLag = times.compactMap { sequence, time in
            reached[sequence].map { Double(Int64(bitPattern: $0 &- time)) / 1e6 }
        }
        checks.expect("R1", replica.failure == nil, "the replica failed: \(replica.failure.map { "\($0)" } ?? "")")
        checks.expect("R1", times.count == commits, "the writer returned \(times.count) of \(commits) commits")
        checks.expect("R1", lag.count == commits, "the replica's store showed \(lag.count) of \(commits) commits")
        checks.expect(
            "R1", replica.store.snapshot.sequence == last,
            "the replica shows record \(replica.store.snapshot.sequence), the writer \(last)")
        let mine = try Self.nSum(writer.snapshot, writer.schema)
        let theirs = try Self.nSum(replica.store.snapshot, replica.store.schema)
        checks.equal("R1", "replica's item count and sum of n", "\(theirs)", expected: "\(mine)")
        checks.equal(
            "R1", "writer's item count and sum of n", "\(mine)",
            expected: "\((commits + 1, Int64(commits) * Int64(commits - 1) / 2))")
        try writer.close()
        let p = { (values: [Double], q: Double) in Measure.quantile(values, q) }
        let seconds = Double(ended - began) / 1e9
        figures.add("R1", "lag_p50_ms", "ms", .lower, trellis: p(lag, 0.5), sqlite: nil)
        figures.add("R1", "lag_p99_ms", "ms", .lower, trellis: p(lag, 0.99), sqlite: nil)
        figures.add("R1", "lag_max_ms", "ms", .lower, trellis: lag.max(), sqlite: nil)
        figures.add("R1", "publish_lag_p50_ms", "ms", .lower, trellis: p(publishLag, 0.5), sqlite: nil)
        figures.add("R1", "publish_lag_p99_ms", "ms", .lower, trellis: p(publishLag, 0.99), sqlite: nil)
        figures.add("R1", "applied_lag_p50_ms", "ms", .lower, trellis: p(appliedLag, 0.5), sqlite: nil)
        figures.add("R1", "applied_lag_p99_ms", "ms", .lower, trellis: p(appliedLag, 0.99), sqlite: nil)
        figures.add(
            "R1", "commits_per_s", "commits/s", .higher, trellis: Double(commits) / seconds, sqlite: rate,
            peer: "the pace asked")
    }

    /// Commits `count` one-object transactions at `rate` a second: commit i is due at the start plus i / rate, taken
    /// by one of eight threads, so that a slow sync delays its own commit, not the schedule (concurrent commits share
    /// a sync). Tells `returned` the monotonic time each sequence number's commit returned; returns the start and the
    /// last return.
    private static func pacedCommits(
        _ store: Store, count: Int, rate: Double, returned: SequenceTimes
    ) throws -> (UInt64, UInt64) {
        let threads = 8
        let interval = 1e9 / rate
        let start = Measure.now() + 10_000_000
        let failure = SequenceTimes()
        let group = DispatchGroup()
        for t in 0..<threads {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                for i in stride(from: t, to: count, by: threads) {
                    let due = start + UInt64(Double(i) * interval)
                    let now = Measure.now()
                    if due > now { usleep(UInt32((due - now) / 1_000)) }
                    do {
                        var tx = store.transaction()
                        _ = try tx.insert(
                            "ReplicatedItem", ["n": .int(Int64(i)), "title": .string("item \(i)")])
                        let commit = try store.commit(tx)
                        returned.set(commit.sequence...commit.sequence, Measure.now())
                    } catch {
                        failure.fail("\(error)")
                        return
                    }
                }
            }
            thread.start()
        }
        group.wait()
        if let error = failure.failure { throw BenchError("R1: a paced commit failed: \(error)") }
        return (start, returned.all.values.max() ?? start)
    }

    /// The count of `ReplicatedItem`s and the sum of their `n`.
    private static func nSum(_ snapshot: Snapshot, _ schema: Schema) throws -> (Int, Int64) {
        let entity = try schema.entity("ReplicatedItem")
        let n = try schema.attribute("ReplicatedItem", "n")
        var count = 0
        var sum: Int64 = 0
        for row in snapshot.rows(entity: entity) {
            count += 1
            sum &+= row.int(n) ?? 0
        }
        return (count, sum)
    }

    private func replicationBootstrap(url: String) throws {
        let count = n
        let updates = 1_000
        // At least ten commits: a checkpoint at record 1 would make the publisher purge the stream up to sequence 1,
        // which nats-server 2.9 takes as the whole stream.
        let batch = min(10_000, max(1, count / 10))
        progress("R1 replica bootstrap of \(count) items (checkpoint object + \(updates) records) vs local reopen")
        let sourceDir = directory("r1-source")
        let replicaDir = directory("r1-boot")
        defer {
            try? FileManager.default.removeItem(atPath: sourceDir)
            try? FileManager.default.removeItem(atPath: replicaDir)
        }
        let source = try TrellisStorage.open(directory: sourceDir, model: model, durability: .relaxed)
        let publisher = try ReplicationPublisher(store: source, url: url, name: "r1boot")
        defer { publisher.stop() }
        for first in stride(from: 0, to: count, by: batch) {
            var tx = source.transaction()
            for item in items[first..<min(first + batch, count)] {
                tx.insert(entity: model.item, row: model.row(item))
            }
            try source.commit(tx)
        }
        try source.flush()
        // The stream must hold a checkpoint's record before the publisher puts the checkpoint up.
        while try publisher.publishPending() > 0 {}
        try source.compact()
        let checkpoint = source.snapshot.sequence
        let ids = source.snapshot.rows(entity: model.item).prefix(updates).map(\.id)
        for (k, id) in ids.enumerated() {
            try source.write { tx in try tx.set(id, model.n1, .int(Int64(1_000_000 + k))) }
        }
        try source.flush()
        let last = source.snapshot.sequence
        while try publisher.publishPending() > 0 {}
        checks.expect(
            "R1", publisher.publishedSequence == last && publisher.checkpointSequence == checkpoint,
            "the publisher published \(publisher.publishedSequence) of \(last), checkpoint "
                + "\(publisher.checkpointSequence) of \(checkpoint)")
        let expected = try Self.itemSums(source.snapshot, model)
        let checkpointBytes = Self.checkpointBytes(sourceDir)
        try source.close()

        var bootstrapMs = 0.0
        var checkpointMs = 0.0
        var reopenMs = 0.0
        for side in nextTrellisFirst() ? ["replica", "reopen"] : ["reopen", "replica"] {
            sync()
            if side == "replica" {
                let start = Measure.now()
                let replica = try Replica(url: url, name: "r1boot", directory: URL(fileURLWithPath: replicaDir))
                checkpointMs = Double(Measure.now() - start) / 1e6
                replica.start()
                // Done when the replica's store (what its view context reads) shows the last record.
                let deadline = start + 600_000_000_000
                while (try? replica.store.catchUp()) ?? 0 < last && replica.failure == nil
                    && Measure.now() < deadline
                {
                    usleep(500)
                }
                bootstrapMs = Double(Measure.now() - start) / 1e6
                checks.expect(
                    "R1", replica.failure == nil, "the replica failed: \(replica.failure.map { "\($0)" } ?? "")")
                checks.equal(
                    "R1", "bootstrapped replica's sums", try Self.itemSums(replica.store.snapshot, model),
                    expected: expected)
                checks.equal("R1", "bootstrapped replica's record", replica.store.snapshot.sequence, expected: last)
                replica.stop()
            } else {
                let (store, ms) = try Measure.milliseconds {
                    try TrellisStorage.open(directory: sourceDir, model: model, durability: .perCommit)
                }
                reopenMs = ms
                checks.equal(
                    "R1", "reopened store's sums", try Self.itemSums(store.snapshot, model), expected: expected)
                checks.equal("R1", "reopened store's record", store.snapshot.sequence, expected: last)
                try store.close()
            }
        }
        figures.add(
            "R1", "bootstrap_ms", "ms", .lower, trellis: bootstrapMs, sqlite: reopenMs, peer: "local reopen")
        figures.add("R1", "bootstrap_open_ms", "ms", .lower, trellis: checkpointMs, sqlite: nil)
        figures.add("R1", "checkpoint_bytes", "bytes", .lower, trellis: checkpointBytes.map(Double.init), sqlite: nil)
    }

    /// The item count and the sums of `id` and `n1` of a store of workload items.
    private static func itemSums(_ snapshot: Snapshot, _ model: TrellisModel) throws -> ItemSums {
        var sums = ItemSums()
        for row in snapshot.rows(entity: model.item) {
            sums.count += 1
            sums.id &+= row.int(model.id) ?? 0
            sums.n1 &+= row.int(model.n1) ?? 0
        }
        return sums
    }

    /// The size of the newest checkpoint file in a store's directory.
    private static func checkpointBytes(_ directory: String) -> Int? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        guard let newest = names.filter({ $0.hasPrefix("checkpoint-") }).max() else { return nil }
        let path = (directory as NSString).appendingPathComponent(newest)
        return (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
    }
}

/// What R1's bootstrap checks a store of workload items holds.
struct ItemSums: Equatable, CustomStringConvertible {
    var count = 0
    var id: Int64 = 0
    var n1: Int64 = 0

    var description: String { "\(count) items, sum of id \(id), sum of n1 \(n1)" }
}

/// Monotonic times by sequence number, filled from several threads; with a flag to stop a sampler and the first
/// error of a group of threads.
final class SequenceTimes: Sendable {
    private struct State {
        var times: [UInt64: UInt64] = [:]
        var finished = false
        var failure: String?
    }

    private let state = Mutex(State())

    /// Sets the time of each sequence number in `sequences` that has none yet.
    func set(_ sequences: ClosedRange<UInt64>, _ time: UInt64) {
        state.locked { s in for n in sequences where s.times[n] == nil { s.times[n] = time } }
    }

    var all: [UInt64: UInt64] { state.locked { $0.times } }
    var finished: Bool { state.locked { $0.finished } }
    var failure: String? { state.locked { $0.failure } }
    func finish() { state.locked { $0.finished = true } }
    func fail(_ message: String) { state.locked { if $0.failure == nil { $0.failure = message } } }
}

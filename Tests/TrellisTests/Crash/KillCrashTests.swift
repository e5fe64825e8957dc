import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Matrix case 12 (harness K): a child process committing in per-commit durability is killed with SIGKILL at random
/// moments, round after round on the same store; every round recovers a prefix holding every acknowledged commit.
@Suite struct KillCrashTests {
    typealias X = CrashExpectations

    /// Rounds in all, shared by `lanes` stores that run side by side (one child process each), so both cores work.
    static let rounds = X.long ? 2_000 : 200
    static let lanes = 2
    /// The long mode stops starting rounds after this many seconds (and says so), so it stays bounded.
    static let budget: Double = X.long ? 1_500 : 240

    @Test(
        "12: SIGKILL at random moments, round after round, never loses an acknowledged commit",
        arguments: 0..<lanes)
    func sigkillAtRandomMomentsNeverLosesAnAcknowledgedCommit(lane: Int) throws {
        let temporary = TemporaryDirectory()
        let store = temporary.store
        var random = SeededRandom(seed: 12 + UInt64(lane) * 1_000)
        let laneRounds = Self.rounds / Self.lanes
        var floor = 0
        var (rounds, acknowledgedTotal, tornTails, killedMidRun, lost) = (0, 0, 0, 0, 0)
        let started = Date()
        while rounds < laneRounds && Date().timeIntervalSince(started) < Self.budget {
            rounds += 1
            // A fresh store now and then keeps replays short; compaction and rotation run inside the rounds.
            if floor > X.replayed - 200 {
                try FileManager.default.removeItem(at: store)
                floor = 0
            }
            // The delay counts from the child's first acknowledgement, so the kill lands among its commits (from
            // the start, most kills of a debug build landed while it opened).
            let delay = Double(random.next() % 120_000) / 1_000_000
            let child = try CrashChild.run(
                [
                    "run", "--dir", store.path, "--commits", "\(X.replayed)", "--compact-every", "37",
                    "--segment-bytes", "16384",
                ], killAfter: delay, afterFirstAck: true)
            if child.killed { killedMidRun += 1 }
            let acknowledged = max(floor, child.acknowledged)
            acknowledgedTotal += max(0, child.acknowledged - (child.opened ?? floor))
            guard FileManager.default.fileExists(atPath: store.appendingPathComponent("MANIFEST").path) else {
                #expect(acknowledged == 0, "round \(rounds): no manifest after acknowledging \(acknowledged)")
                continue
            }
            let problems = try X.problems(store)
            X.expectOnlyCrashDamage(problems, "round \(rounds)")
            if problems.contains(where: { $0.kind == .tornTail }) { tornTails += 1 }
            let reopened = try Store(directory: store, schema: CrashWorkload.schema)
            let k = X.expectPrefix(reopened.snapshot, acknowledged: acknowledged, "round \(rounds)")
            if k < acknowledged { lost += acknowledged - k }
            try reopened.close()
            floor = k
        }
        #expect(rounds >= min(laneRounds, 100))
        #expect(lost == 0)
        #expect(killedMidRun > rounds / 2, "the kills mostly came too late: \(killedMidRun) of \(rounds)")
        // Each round commits before it is killed; a slower machine or build shows here, not as a quietly smaller
        // figure.
        #expect(
            acknowledgedTotal >= 3 * rounds,
            "\(acknowledgedTotal) acknowledged commits in \(rounds) rounds: the kills land before the commits")
        print(
            "crash suite, case 12, lane \(lane + 1) of \(Self.lanes): \(rounds) kill rounds in \(Int(Date().timeIntervalSince(started))) s, "
                + "\(killedMidRun) killed mid-run, \(acknowledgedTotal) acknowledged commits, \(lost) lost, "
                + "\(tornTails) torn tails dropped")
    }
}

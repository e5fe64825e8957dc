import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Matrix case 13 (harness K): the child kills itself at each named point of the write paths (`CrashPoints`), at
/// its first, second and third passage; the store recovers a prefix holding every acknowledged commit, then carries
/// on to the end.
@Suite struct CrashPointTests {
    typealias X = CrashExpectations

    static let points = [
        "before-segment-rename", "after-segment-rename", "before-checkpoint-sync", "after-checkpoint-rename",
        "before-manifest-rename", "after-manifest-rename", "before-unlink-old", "mid-record",
    ]

    static let arguments = ["--commits", "60", "--compact-every", "10", "--segment-bytes", "2048"]

    @Test(
        "13: a self-kill at each named point of the write paths recovers every acknowledged commit", arguments: points)
    func selfKillAtANamedPointRecoversEveryAcknowledgedCommit(point: String) throws {
        for skip in 0..<(X.long ? 6 : 3) {
            let temporary = TemporaryDirectory()
            let store = temporary.store
            let child = try CrashChild.run(
                ["run", "--dir", store.path] + Self.arguments,
                environment: ["TRELLIS_CRASH_AT": point, "TRELLIS_CRASH_SKIP": "\(skip)"])
            #expect(child.killed, "\(point) #\(skip) was never reached: \(child.lines.suffix(2))")
            if FileManager.default.fileExists(atPath: store.appendingPathComponent("MANIFEST").path) {
                X.expectOnlyCrashDamage(try X.problems(store), "\(point) #\(skip)")
                let reopened = try Store(directory: store, schema: CrashWorkload.schema)
                X.expectPrefix(reopened.snapshot, acknowledged: child.acknowledged, "\(point) #\(skip)")
                try reopened.close()
            } else {
                #expect(child.acknowledged == 0)
            }
            let rest = try CrashChild.run(["run", "--dir", store.path] + Self.arguments)
            #expect(rest.lines.last == "closed 60", "\(point) #\(skip): \(rest.lines.suffix(2))")
            let final = try Store(directory: store, schema: CrashWorkload.schema)
            X.expectPrefix(final.snapshot, acknowledged: 60, "\(point) #\(skip)")
            try final.close()
            #expect(try X.problems(store) == [])
        }
    }

    /// The library kills nothing by itself: the variables mean something only to the handler `trellis-crashtest`
    /// installs. Given `--no-crash-points` it installs none, like any app, and a run whose environment names a point
    /// (which the test above shows kills the same run with the handler) goes through to the end. This test process,
    /// which links the library and never installs a handler, passes every point too.
    @Test("13: without an installed handler, TRELLIS_CRASH_AT stops nothing", arguments: points)
    func theEnvironmentAloneStopsNothing(point: String) throws {
        #expect(!CrashPoints.isInstalled)
        CrashPoints.hit(point)
        #expect(!CrashPoints.isArmed(point))
        let temporary = TemporaryDirectory()
        let child = try CrashChild.run(
            ["run", "--dir", temporary.store.path, "--no-crash-points"] + Self.arguments,
            environment: ["TRELLIS_CRASH_AT": point, "TRELLIS_CRASH_SKIP": "0"])
        #expect(!child.killed, "\(point) stopped a process without a handler")
        #expect(child.exitStatus == 0)
        #expect(child.lines.last == "closed 60", "\(point): \(child.lines.suffix(2))")
        #expect(try X.problems(temporary.store) == [])
    }
}

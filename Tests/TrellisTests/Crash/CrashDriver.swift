import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Drives the crash workload on a simulated disk until the disk (or an injected fault) stops it, then recovers
/// from a crash and checks what every matrix case checks.
struct CrashDriver {
    typealias X = CrashExpectations

    var commits = 40
    var segmentBytes = 4_096
    var compactEvery = 15

    /// Opens (or creates) the store and commits transactions after what it holds through `commits`, compacting every
    /// `compactEvery`; stops at the first error. Returns the last acknowledged commit (at least `acknowledged`).
    @discardableResult
    func drive(_ disk: SimulatedFileLayer, acknowledged: Int = 0) -> Int {
        var last = acknowledged
        guard let store = try? X.open(disk, segmentBytes: segmentBytes) else { return last }
        var n = Int(store.snapshot.sequence) + 1
        while n <= commits {
            guard (try? CrashWorkload.commit(n, to: store)) != nil else { break }
            last = n
            if compactEvery > 0 && n % compactEvery == 0 && (try? store.compact()) == nil { break }
            n += 1
        }
        return last
    }

    /// The disk as a run without faults leaves it, with its recorded operations.
    func cleanRun() -> SimulatedFileLayer {
        let disk = SimulatedFileLayer()
        drive(disk)
        return disk
    }

    /// After a crash: verify finds only what a crash leaves; the store opens to a prefix holding every acknowledged
    /// commit; it takes the next commit, and a reopen holds that too. Returns k.
    @discardableResult
    static func expectRecovery(
        _ disk: SimulatedFileLayer, acknowledged: Int, _ context: @autoclosure () -> String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Int {
        if disk.exists(X.path(JournalFormat.manifestName)).exists {
            X.expectOnlyCrashDamage(try X.problems(disk), context(), sourceLocation: sourceLocation)
        }
        let store = try X.open(disk)
        let k = X.expectPrefix(store.snapshot, acknowledged: acknowledged, context(), sourceLocation: sourceLocation)
        try CrashWorkload.commit(k + 1, to: store)
        try store.close()
        let again = try X.open(disk)
        X.expectPrefix(again.snapshot, acknowledged: k + 1, context(), sourceLocation: sourceLocation)
        try again.close()
        #expect(try X.problems(disk) == [], "\(context())", sourceLocation: sourceLocation)
        return k
    }
}

import Foundation
import Testing
import Trellis

/// The shipping tool is an app of the library: `TRELLIS_CRASH_AT` (which makes `trellis-crashtest` kill itself at a
/// named point) cannot stop it, since only that test tool installs a crash-point handler and the library has none of
/// its own. A compaction passes every point it has.
@Suite struct CrashPointEnvironmentTests {
    static let compactionPoints = [
        "before-checkpoint-sync", "after-checkpoint-rename", "before-manifest-rename", "after-manifest-rename",
        "before-unlink-old",
    ]

    @Test(arguments: compactionPoints)
    func compactRunsThroughAPointTheEnvironmentNames(point: String) throws {
        let directory = Fixture.newDirectory()
        defer { Fixture.cleanUp(directory) }
        // A segment per commit, so that the compaction also unlinks the old segments.
        try Fixture.make(directory, commits: 6, segmentBytes: 1)
        let result = try Tool.run(
            ["compact", directory.path], environment: ["TRELLIS_CRASH_AT": point, "TRELLIS_CRASH_SKIP": "0"])
        #expect(result.status == 0, "\(point): \(result)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names.contains { $0.hasPrefix("checkpoint-") }, "\(point): \(names.sorted())")
        let verify = try Tool.run(["verify", directory.path])
        #expect(verify.status == 0, "\(point): \(verify)")
    }
}

import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Matrix case 11 with retention (harness F): a crash after every prefix of a compaction that keeps history leaves a
/// store whose history still reads whole from commit 1, before and after a writable open has cleaned up: the history
/// file is written before the manifest and names only files that exist, and recovery removes nothing it names.
@Suite struct HistoryCompactionCrashTests {
    typealias X = CrashExpectations

    static let commits = 30

    static func prepared() throws -> (SimulatedFileLayer, Store, Int) {
        let disk = SimulatedFileLayer()
        var options = X.options(disk, segmentBytes: 3_000)
        options.history = .commits(1_000)
        let store = try Store(
            directory: URL(fileURLWithPath: X.directory), schema: CrashWorkload.schema, options: options)
        for n in 1...commits {
            try CrashWorkload.commit(n, to: store)
            if n == 10 { try store.compact() }
        }
        try store.flush()
        return (disk, store, disk.operationCount)
    }

    static func sequences(_ disk: SimulatedFileLayer, through: UInt64) throws -> [UInt64] {
        var seen: [UInt64] = []
        try HistoryReader(layer: disk, directory: X.directory).records(after: 0, through: through) {
            seen.append($0.sequence)
        }
        return seen
    }

    @Test(
        "11h: every prefix of a compaction that keeps history leaves the whole history readable",
        arguments: [
            SimulatedFileLayer.CrashPolicy(data: .dropUnsynced, keepUnsyncedEntries: false),
            SimulatedFileLayer.CrashPolicy(data: .keepUnsynced, keepUnsyncedEntries: true),
        ])
    func everyPrefixKeepsTheHistory(policy: SimulatedFileLayer.CrashPolicy) throws {
        let (disk, store, before) = try Self.prepared()
        try store.compact()
        let operations = Array(disk.events[before...])
        try store.close()
        #expect(operations.contains { $0.operation == .rename && $0.path.hasSuffix(HistoryFile.name) })
        for prefix in 0...operations.count {
            let (disk, store, before) = try Self.prepared()
            disk.halt(afterOperations: before + prefix)
            _ = try? store.compact()
            let after = disk.crash(policy)
            #expect(try Self.sequences(after, through: 30) == Array(1...30), "prefix \(prefix)")
            let k = try CrashDriver.expectRecovery(after, acknowledged: Self.commits, "prefix \(prefix)")
            #expect(k == Self.commits, "prefix \(prefix)")
            #expect(try Self.sequences(after, through: 31) == Array(1...31), "prefix \(prefix), after the opens")
        }
    }
}

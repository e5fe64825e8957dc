import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// The checks every case of the crash matrix makes, and the versions they compare against.
///
/// The deterministic transactions of `CrashWorkload` are replayed once in memory; a recovered store must equal one
/// of those versions exactly (a prefix 1…k: no partial transaction), with k at least the last acknowledged commit.
enum CrashExpectations {
    /// Versions 0…`replayed` of the workload (index k: after transactions 1…k).
    static let replayed = 1_200
    static let versions: [Graph] = try! CrashWorkload.versions(through: replayed)

    static let directory = SimulatedFileLayer.storePath

    /// Whether crash tests run their long mode (`TRELLIS_LONG_TESTS=1`).
    static let long = ProcessInfo.processInfo.environment["TRELLIS_LONG_TESTS"] == "1"

    /// Checks that `graph` is exactly the workload's version `graph.sequence`, and that nothing acknowledged was lost;
    /// returns k.
    @discardableResult
    static func expectPrefix(
        _ graph: Graph, acknowledged: Int, _ context: @autoclosure () -> String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Int {
        let k = Int(graph.sequence)
        #expect(
            k >= acknowledged, "lost acknowledged commits: recovered \(k) < \(acknowledged) \(context())",
            sourceLocation: sourceLocation)
        guard k <= replayed else {
            Issue.record("recovered \(k) beyond the replayed versions", sourceLocation: sourceLocation)
            return k
        }
        let problems = problems(graph, comparedWith: versions[k])
        #expect(problems == [], "not the prefix 1…\(k) \(context())", sourceLocation: sourceLocation)
        return k
    }

    /// What makes a recovered `graph` other than `expected`: any difference in objects, values, relationship ends or
    /// index entries (`Graph.differences`, which includes the highest serials: object IDs are never reused), and any
    /// broken invariant of `graph` itself. Empty when it is exactly `expected`.
    static func problems(_ graph: Graph, comparedWith expected: Graph) -> [String] {
        graph.differences(from: expected) + graph.invariantViolations().map { "invariant: \($0)" }
    }

    /// The problems `verify` finds in a store on a simulated disk.
    static func problems(_ disk: SimulatedFileLayer) throws -> [JournalProblem] {
        try JournalReader(path: directory, layer: disk).verify().problems
    }

    /// The problems `verify` finds in a store directory on the real disk.
    static func problems(_ url: URL) throws -> [JournalProblem] {
        try JournalReader(directory: url).verify().problems
    }

    /// What a crash alone may leave (no damage to data that was synced): a torn tail of the last segment, and files
    /// that no manifest references yet or any more.
    static let crashKinds: Set<JournalProblem.Kind> = [.tornTail, .orphanFile]

    /// Checks that verify finds only what a crash leaves, each problem with a file.
    static func expectOnlyCrashDamage(
        _ problems: [JournalProblem], _ context: @autoclosure () -> String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for problem in problems {
            #expect(crashKinds.contains(problem.kind), "\(problem) \(context())", sourceLocation: sourceLocation)
            #expect(!problem.file.isEmpty && problem.offset >= 0, sourceLocation: sourceLocation)
        }
    }

    /// Options for a store of the crash workload on a simulated disk.
    static func options(
        _ disk: SimulatedFileLayer, segmentBytes: Int = 64 << 20, recovery: StoreOptions.Recovery = .tolerateTornTail
    ) -> StoreOptions {
        var options = StoreOptions(recovery: recovery, compaction: .manual, segmentBytes: segmentBytes)
        options.fileLayer = disk
        return options
    }

    static func open(
        _ disk: SimulatedFileLayer, segmentBytes: Int = 64 << 20, recovery: StoreOptions.Recovery = .tolerateTornTail
    ) throws -> Store {
        try Store(
            directory: URL(fileURLWithPath: directory), schema: CrashWorkload.schema,
            options: options(disk, segmentBytes: segmentBytes, recovery: recovery))
    }

    /// A closed store of transactions 1…`commits` on a simulated disk; compacts after every `compactEvery`th.
    static func store(
        commits: Int, segmentBytes: Int = 64 << 20, compactEvery: Int = 0
    ) throws -> SimulatedFileLayer {
        let disk = SimulatedFileLayer()
        let store = try open(disk, segmentBytes: segmentBytes)
        for n in 1...commits {
            try CrashWorkload.commit(n, to: store)
            if compactEvery > 0 && n % compactEvery == 0 { try store.compact() }
        }
        try store.close()
        return disk
    }

    /// Where each record of the journal starts and ends, in order, from a healthy store.
    static func records(_ disk: SimulatedFileLayer) throws -> [(file: String, offset: Int, end: Int)] {
        var out: [(String, Int, Int)] = []
        try JournalReader(path: directory, layer: disk).forEachRecord {
            out.append(($0.file, $0.offset, $0.offset + $0.frameBytes))
        }
        return out
    }

    static func path(_ name: String) -> String { directory + "/" + name }
}

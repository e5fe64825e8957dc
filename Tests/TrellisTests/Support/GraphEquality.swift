@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Compares two graphs object for object, index entry for index entry, and also their sequence numbers (which
/// `Graph.differences(from:)` leaves out, since a replay may number the same contents differently); and checks the
/// invariants of the second, the graph under test.
enum GraphEquality {
    /// The differences, described for people; empty when the graphs are equal and `b` breaks no invariant.
    static func differences(_ a: Graph, _ b: Graph, limit: Int = 10) -> [String] {
        let sequence = a.sequence == b.sequence ? [] : ["sequence \(a.sequence) vs \(b.sequence)"]
        return sequence + a.differences(from: b, limit: limit)
            + b.invariantViolations(limit: limit).map { "invariant: \($0)" }
    }
}

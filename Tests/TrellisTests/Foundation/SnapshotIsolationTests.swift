import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

@Suite struct SnapshotIsolationTests {
    /// Reads everything a snapshot holds into plain values, to compare later.
    private func contents(_ s: Snapshot) throws -> [String] {
        var out: [String] = []
        for entity in ["Folder", "Note", "Tag"] {
            for id in try s.objectIDs(entity) {
                out.append("\(id) \(s.row(id)!)")
                for rel in s.schema.entities[Int(id.entity)].relationships {
                    out.append("\(id).\(rel.name) \(try s.targets(id, rel.name))")
                }
            }
        }
        let score = try s.schema.index("Note", ["score"])
        out.append("scan \(s.scan(score))")
        return out
    }

    @Test func aSnapshotReadsIdenticallyAfter1000LaterCommits() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        var workload = RandomWorkload(seed: 7, schema: store.schema)
        for _ in 0..<100 { _ = try? store.commit(try workload.transaction(for: store)) }
        let kept = store.snapshot
        let expected = try contents(kept)
        var commits = 0
        while commits < 1000 {
            if let commit = try? store.commit(try workload.transaction(for: store)), !commit.changes.isEmpty {
                commits += 1
            }
        }
        #expect(store.snapshot.sequence >= kept.sequence + 1000)
        #expect(try contents(kept) == expected)
        #expect(try contents(store.snapshot) != expected)
        #expect(kept.invariantViolations() == [])
    }
}

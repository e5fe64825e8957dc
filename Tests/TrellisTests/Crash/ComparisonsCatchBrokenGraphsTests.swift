import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisStore

/// The comparisons the recovery and crash tests rely on fail when they should: each is fed a correct graph's copy with
/// one wrong index entry, one missing inverse end, or one wrong value, and must report it by name.
@Suite struct ComparisonsCatchBrokenGraphsTests {
    static let schema = try! Schema([
        EntityDescription(
            "Folder", attributes: [AttributeDescription("name", .string)],
            relationships: [RelationshipDescription("items", to: "Item", inverse: "folder", toMany: true)],
            indexes: [.on("name")]),
        EntityDescription(
            "Item", attributes: [AttributeDescription("title", .string), AttributeDescription("rank", .int)],
            relationships: [RelationshipDescription("folder", to: "Folder", inverse: "items")],
            indexes: [.on("rank")]),
    ])
    static let folder: UInt32 = 0
    static let item: UInt32 = 1

    /// Two folders and six items, ranks 10, 20, …, 60, each item in folder (n % 2) + 1.
    static func correct() throws -> Graph {
        let store = Store(schema: schema)
        try store.write { tx in
            let folders = try (0..<2).map { try tx.insert("Folder", ["name": .string("folder \($0)")]) }
            for n in 1...6 {
                let id = try tx.insert("Item", ["title": .string("item \(n)"), "rank": .int(Int64(n * 10))])
                try tx.link(id, "folder", folders[n % 2])
            }
        }
        return store.snapshot
    }

    enum Breakage: String, CaseIterable {
        /// Item 2's rank index entry says 21 while its row says 20: still between 10 and 30, so the serial order of
        /// the index is right and only the entry's value is wrong.
        case wrongScalarIndexEntry
        /// Folder 1's name index entry says "folder 0x" while its row says "folder 0".
        case wrongGeneralIndexEntry
        /// Item 3 still names folder 2, but folder 2 no longer lists item 3.
        case missingInverseEnd
        /// Item 4's title differs (its row alone; nothing indexes it).
        case wrongValue

        func apply(to graph: inout Graph) {
            let items = graph.layout(item)
            switch self {
            case .wrongScalarIndexEntry:
                let columns = items.indexes[0].columns
                graph.tables[Int(item)].indexes[0].update(columns, serial: 2, adding: false) { _ in .int(20) }
                graph.tables[Int(item)].indexes[0].update(columns, serial: 2, adding: true) { _ in .int(21) }
            case .wrongGeneralIndexEntry:
                let columns = graph.layout(folder).indexes[0].columns
                graph.tables[Int(folder)].indexes[0].update(columns, serial: 1, adding: false) { _ in
                    .string("folder 0")
                }
                graph.tables[Int(folder)].indexes[0].update(columns, serial: 1, adding: true) { _ in
                    .string("folder 0x")
                }
            case .missingInverseEnd:
                graph.tables[Int(folder)].removeTarget(2, 0, 3, layout: graph.layout(folder))
            case .wrongValue:
                _ = graph.tables[Int(item)].setValue(4, 0, .string("item 4, changed"), layout: items)
            }
        }

        /// A word every report of this breakage must contain.
        var named: String {
            switch self {
            case .wrongScalarIndexEntry: return "serial 2"
            case .wrongGeneralIndexEntry: return "folder 0x"
            case .missingInverseEnd: return "items"
            case .wrongValue: return "title"
            }
        }
    }

    @Test func theCorrectGraphPassesEveryComparison() throws {
        let graph = try Self.correct()
        let copy = try Self.correct()
        #expect(graph.differences(from: copy) == [])
        #expect(graph.invariantViolations() == [])
        #expect(GraphEquality.differences(graph, copy) == [])
        #expect(CrashExpectations.problems(copy, comparedWith: graph) == [])
    }

    @Test(
        "graph equality, the test comparison and the crash expectations each report each breakage by name",
        arguments: Breakage.allCases)
    func everyComparisonReportsTheBreakage(_ breakage: Breakage) throws {
        let correct = try Self.correct()
        var broken = correct
        breakage.apply(to: &broken)
        let reports = [
            ("Graph.differences", broken.differences(from: correct)),
            ("Graph.differences, the other way", correct.differences(from: broken)),
            ("GraphEquality.differences", GraphEquality.differences(correct, broken)),
            ("CrashExpectations.problems", CrashExpectations.problems(broken, comparedWith: correct)),
        ]
        for (name, found) in reports {
            #expect(!found.isEmpty, "\(name) misses \(breakage)")
            #expect(found.contains { $0.contains(breakage.named) }, "\(name) does not name \(breakage): \(found)")
        }
        // The correct graph is untouched: copies share structure, and the breakage copied what it changed.
        #expect(correct.invariantViolations() == [])
    }

    @Test(
        "the invariant checker reports a wrong index entry and a missing inverse end by name",
        arguments: [Breakage.wrongScalarIndexEntry, .wrongGeneralIndexEntry, .missingInverseEnd])
    func theInvariantCheckerReportsTheBreakage(_ breakage: Breakage) throws {
        var broken = try Self.correct()
        breakage.apply(to: &broken)
        let found = broken.invariantViolations()
        #expect(!found.isEmpty, "the invariant checker misses \(breakage)")
        let named = breakage == .missingInverseEnd ? "has no inverse" : "does not match the rows"
        #expect(found.contains { $0.contains(named) }, "\(found)")
    }

    @Test func theInvariantCheckerReportsAValueItsIndexDoesNotHold() throws {
        var broken = try Self.correct()
        // Item 5's rank column says 55 (between 50 and 60: the index order stays right) but its index entry says 50.
        let columns = broken.layout(Self.item).indexes[0].columns
        _ = broken.tables[Int(Self.item)].setValue(5, 1, .int(55), layout: broken.layout(Self.item))
        broken.tables[Int(Self.item)].indexes[0].update(columns, serial: 5, adding: false) { _ in .int(55) }
        broken.tables[Int(Self.item)].indexes[0].update(columns, serial: 5, adding: true) { _ in .int(50) }
        let found = broken.invariantViolations()
        #expect(
            found.contains { $0.contains("index 0 does not match the rows") && $0.contains("serial 5") }, "\(found)")
    }
}

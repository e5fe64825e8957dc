import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Format version 3 stores the order of each index whose order is not serial order (record type 5), and loading builds
/// such an index by putting its keys in their places instead of sorting them. These tests prove the stored order is
/// used, that an order that does not sort the keys is refused (the index is sorted instead, equal either way), that
/// bad structure is damage, and that version-2 checkpoints, which store no order, still load.
@Suite struct CheckpointIndexOrderTests {
    typealias Fixture = CheckpointColumnsTests

    /// Writes `graph` with `version` and `places`, then loads it back, reporting what became of the stored orders.
    static func roundTrip(
        _ graph: Graph, version: UInt16 = JournalFormat.version,
        places: (EntityTable, Int) -> [Int64]? = CheckpointIndexOrder.places
    ) throws -> (graph: Graph, orders: Checkpoint.IndexOrderReport, bytes: [UInt8]) {
        let disk = SimulatedFileLayer()
        try disk.createDirectory("/c")
        _ = try Checkpoint.write(graph, layer: disk, directory: "/c", version: version, places: places)
        let name = JournalFormat.checkpointName(graph.sequence)
        let file = try disk.open("/c/" + name, .read)
        defer { file.close() }
        let (loaded, orders) = try Checkpoint.loadReporting(file, name: name, schema: graph.schema)
        return (loaded, orders, disk.contents("/c/" + name)!)
    }

    /// The indexes of `graph` whose order is not serial order: those a version-3 checkpoint stores.
    static func unorderedIndexes(_ graph: Graph) -> Int {
        graph.tables.reduce(0) { total, table in
            total + table.indexes.indices.filter { CheckpointIndexOrder.places(table, index: $0) != nil }.count
        }
    }

    @Test(arguments: [(1, 300), (2, 300), (3, 9_000), (4, 70)])
    func everyUnorderedIndexIsBuiltFromItsStoredOrder(seed: UInt64, rows: Int) throws {
        let graph = Fixture.randomGraph(seed: seed, rows: rows)
        let expected = Self.unorderedIndexes(graph)
        // The unique key grows with the serials; rd, rt, rb and the tags' labels are random, and so are the general
        // indexes on optional attributes when the seed is odd (even seeds leave those attributes null).
        #expect(expected >= (seed % 2 == 0 ? 4 : 8))
        let (loaded, orders, bytes) = try Self.roundTrip(graph)
        Fixture.expectEqual(graph, loaded)
        #expect(orders == Checkpoint.IndexOrderReport(placed: expected, rejected: 0))
        #expect(bytes[8] == UInt8(JournalFormat.version))
    }

    /// `graph`'s things again with serials 1, 2, 3…: leaves with no gap between them.
    static func denseCopy(_ graph: Graph) -> Graph {
        var dense = Graph(schema: graph.schema)
        let layout = graph.schema.layouts[0]
        for (n, row) in graph.rows(entity: 0).enumerated() {
            let inserted = dense.tables[0].insertRow(UInt64(n + 1), row.values, layout: layout)
            #expect(inserted)
        }
        return dense
    }

    /// Both ways a writer finds a serial's leaf: by search where leaves have gaps between them, by distance from the
    /// first where they have none.
    @Test(arguments: [false, true])
    func theStoredPlacesAreEachObjectsPositionInTheIndex(dense: Bool) throws {
        let random = Fixture.randomGraph(seed: 6, rows: 500)
        let graph = dense ? Self.denseCopy(random) : random
        let table = graph.tables[0]
        let layout = graph.schema.layouts[0]
        let rd = layout.indexes.firstIndex { $0.columns == [15] }!
        let places = try #require(CheckpointIndexOrder.places(table, index: rd))
        // Serial order of the live objects, and their order by (rd, serial), computed here independently.
        let serials = Array(graph.rows(entity: 0)).map(\.id.serial)
        #expect(places.count == serials.count)
        let byKey = serials.sorted { a, b in
            let (x, y) = (table.value(a, 15)!, table.value(b, 15)!)
            guard case .double(let p) = x, case .double(let q) = y else { return false }
            let (kp, kq) = (ScalarCoding.encode(p), ScalarCoding.encode(q))
            return kp != kq ? kp < kq : a < b
        }
        for (rank, serial) in serials.enumerated() {
            #expect(byKey[Int(places[rank])] == serial)
        }
        // The unique key ascends with the serials: nothing is stored for it.
        let key = layout.indexes.firstIndex { $0.columns == [14] }!
        #expect(CheckpointIndexOrder.places(table, index: key) == nil)
    }

    @Test func anIndexThatDoesNotHoldEveryObjectGetsNoStoredOrderAndLoadsRebuiltFromTheRows() throws {
        let graph = Fixture.randomGraph(seed: 5, rows: 400)
        let rd = graph.schema.layouts[0].indexes.firstIndex { $0.columns == [15] }!
        #expect(CheckpointIndexOrder.places(graph.tables[0], index: rd) != nil)
        // An entry taken out behind the table's back (commits never do this).
        var damaged = graph
        let serial = Array(graph.rows(entity: 0))[7].id.serial
        let table = graph.tables[0]
        damaged.tables[0].indexes[rd].update([15], serial: serial, adding: false) { table.value(serial, $0)! }
        #expect(damaged.tables[0].indexes[rd].count == graph.tables[0].count - 1)
        #expect(CheckpointIndexOrder.places(damaged.tables[0], index: rd) == nil)
        // Written anyway, the checkpoint loads with the index rebuilt whole from the rows.
        let (loaded, orders, _) = try Self.roundTrip(damaged)
        #expect(loaded.tables[0].indexes[rd].allSerials == graph.tables[0].indexes[rd].allSerials)
        #expect(orders.rejected == 0 && orders.placed == Self.unorderedIndexes(graph) - 1)
    }

    @Test func anOrderThatDoesNotSortTheKeysIsRefusedAndTheIndexSorted() throws {
        let graph = Fixture.randomGraph(seed: 3, rows: 2_000)
        let expected = Self.unorderedIndexes(graph)
        // Two places swapped: still a permutation, but it puts two keys out of order.
        let swapped = try Self.roundTrip(graph) { table, index in
            guard var places = CheckpointIndexOrder.places(table, index: index) else { return nil }
            places.swapAt(0, places.count - 1)
            return places
        }
        Fixture.expectEqual(graph, swapped.graph)
        #expect(swapped.orders == Checkpoint.IndexOrderReport(placed: 0, rejected: expected))
        // One place repeated: not a permutation.
        let repeated = try Self.roundTrip(graph) { table, index in
            guard var places = CheckpointIndexOrder.places(table, index: index) else { return nil }
            places[1] = places[0]
            return places
        }
        Fixture.expectEqual(graph, repeated.graph)
        #expect(repeated.orders == Checkpoint.IndexOrderReport(placed: 0, rejected: expected))
        // Serial order stored for every index, the sorted ones included: those are taken as they are.
        let identity = try Self.roundTrip(graph) { table, _ in
            Array(0..<Int64(table.count))
        }
        Fixture.expectEqual(graph, identity.graph)
        let indexes = graph.schema.layouts.indices.reduce(0) { total, e in
            total + (graph.tables[e].count > 0 ? graph.schema.layouts[e].indexes.count : 0)
        }
        #expect(identity.orders == Checkpoint.IndexOrderReport(placed: indexes - expected, rejected: expected))
    }

    @Test func placesOfTheWrongCountOrRangeAreDamage() throws {
        let graph = Fixture.randomGraph(seed: 1, rows: 300)
        let count = graph.tables[0].count
        let cases: [(String, (EntityTable, Int) -> [Int64]?)] = [
            (
                "an index order of \(count + 1) places for \(count) objects",
                { table, index in
                    CheckpointIndexOrder.places(table, index: index).map { $0 + [0] }
                }
            ),
            (
                "place \(count) of an index of \(count) entries",
                { table, index in
                    CheckpointIndexOrder.places(table, index: index).map { $0.dropLast() + [Int64(count)] }
                }
            ),
            (
                "place -1 of an index of \(count) entries",
                { table, index in
                    CheckpointIndexOrder.places(table, index: index).map { [-1] + $0.dropFirst() }
                }
            ),
        ]
        for (message, places) in cases {
            #expect {
                _ = try Self.roundTrip(graph, places: places)
            } throws: { error in
                guard let problem = error as? JournalProblem else { return false }
                return problem.kind == .decode && problem.message.contains(message)
            }
        }
    }

    @Test func aVersionTwoCheckpointStoresNoOrderAndLoadsBySorting() throws {
        let graph = Fixture.randomGraph(seed: 2, rows: 3_000)
        let two = try Self.roundTrip(graph, version: 2)
        Fixture.expectEqual(graph, two.graph)
        #expect(two.orders == Checkpoint.IndexOrderReport())
        #expect(two.bytes[8] == 2)
        // The same graph in version 3 differs only by the order frames (and the version): it is longer.
        let three = try Self.roundTrip(graph)
        #expect(three.bytes.count > two.bytes.count)
        #expect(three.orders.placed == Self.unorderedIndexes(graph))
    }

    @Test func anIndexOrderFrameInAVersionTwoFileIsAnUnknownType() throws {
        let graph = Fixture.randomGraph(seed: 4, rows: 100)
        let (_, _, bytes) = try Self.roundTrip(graph)
        let two = ByteMutators.downgraded(bytes, to: 2)
        let disk = SimulatedFileLayer()
        try disk.createDirectory("/c")
        let name = JournalFormat.checkpointName(graph.sequence)
        try Fixture.put(disk, "/c/" + name, two)
        let file = try disk.open("/c/" + name, .read)
        defer { file.close() }
        #expect {
            _ = try Checkpoint.load(file, name: name, schema: graph.schema)
        } throws: { error in
            (error as? JournalProblem)?.kind == .unknownType
        }
    }

    @Test func verifyReportsAStoredOrderThatDoesNotSortAndTheStoreStillOpensWhole() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open()
        try JournalWorkload.run(store, seed: 31, commits: 60)
        try store.compact()
        let expected = store.snapshot
        try store.close()
        let dir = SimulatedFileLayer.storePath
        #expect(try JournalReader(path: dir, layer: disk).verify().problems == [])

        // The checkpoint written again with the score index's first and last places swapped.
        let name = disk.names().first { JournalFormat.checkpointSequence($0) != nil }!
        let file = try disk.open(dir + "/" + name, .read)
        let graph = try Checkpoint.load(file, name: name, schema: JournalWorkload.schema)
        file.close()
        #expect(Self.unorderedIndexes(graph) >= 1)
        _ = try Checkpoint.write(graph, layer: disk, directory: dir) { table, index in
            guard var places = CheckpointIndexOrder.places(table, index: index) else { return nil }
            places.swapAt(0, places.count - 1)
            return places
        }
        let problems = try JournalReader(path: dir, layer: disk).verify().problems
        #expect(problems.count == 1)
        #expect(problems.first?.kind == .decode && problems.first?.file == name)
        #expect(problems.first?.message.contains("do not sort their keys") == true)
        let reopened = try disk.open()
        #expect(GraphEquality.differences(expected, reopened.snapshot) == [])
        #expect(reopened.snapshot.invariantViolations() == [])
        try reopened.close()
    }

    @Test func sortedTreeBuilderRefusesKeysOutOfOrderAndCountsWhatIsDue() {
        var builder = SortedTree<Int, Int>.AscendingBuilder(count: 200, fanout: 8)
        var taken = (0..<150).map { k in builder.append(k * 2, -k) }
        #expect(taken.allSatisfy { $0 })
        let below = builder.append(10, 0)
        let repeated = builder.append(298, 0)
        #expect(!below && !repeated, "a key below the last, and a repeated key, are refused")
        #expect(builder.remaining == 50 && builder.finish() == nil)
        taken = (150..<200).map { k in builder.append(k * 2, -k) }
        #expect(taken.allSatisfy { $0 })
        let extra = builder.append(1_000, 0)
        #expect(!extra, "nothing more is due")
        let tree = builder.finish()!
        tree.checkInvariants()
        #expect(tree.count == 200)
        #expect(Array(tree.map(\.key)) == (0..<200).map { $0 * 2 })
        #expect(tree.value(forKey: 398) == -199)
    }
}

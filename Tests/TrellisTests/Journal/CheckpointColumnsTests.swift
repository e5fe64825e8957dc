import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Format version 2 checkpoints: random graphs with every attribute type, nulls, holes in the serials and dangling
/// relationship ends load back equal (object for object, index for index) through the columnar chunks and the bulk
/// loader; version-1 checkpoints and whole version-1 stores still open; damage behind fixed checksums is refused.
@Suite struct CheckpointColumnsTests {
    static let schema = try! Schema([
        EntityDescription(
            "Thing",
            attributes: [
                AttributeDescription("b", .bool, optional: true), AttributeDescription("i", .int, optional: true),
                AttributeDescription("i8", .int8, optional: true), AttributeDescription("i16", .int16, optional: true),
                AttributeDescription("i32", .int32, optional: true),
                AttributeDescription("i64", .int64, optional: true),
                AttributeDescription("d", .double, optional: true), AttributeDescription("f", .float, optional: true),
                AttributeDescription("s", .string, optional: true), AttributeDescription("t", .date, optional: true),
                AttributeDescription("data", .data, optional: true),
                AttributeDescription("u", .uuid, optional: true), AttributeDescription("url", .url, optional: true),
                AttributeDescription("dec", .decimal, optional: true),
                AttributeDescription("key", .int64), AttributeDescription("rd", .double),
                AttributeDescription("rt", .date), AttributeDescription("rb", .bool),
            ],
            relationships: [
                RelationshipDescription("parent", to: "Thing", inverse: "children"),
                RelationshipDescription("children", to: "Thing", inverse: "parent", toMany: true),
                RelationshipDescription("tags", to: "Tag", inverse: "things", toMany: true, deleteRule: .noAction),
            ],
            indexes: [
                .unique("key"), .on("rd"), .on("rt"), .on("rb"), .on("s"), .on("i", "s"), .on("d"), .on("url"),
            ]),
        EntityDescription(
            "Tag", attributes: [AttributeDescription("label", .string)],
            relationships: [
                RelationshipDescription("things", to: "Thing", inverse: "tags", toMany: true, deleteRule: .noAction)
            ], indexes: [.on("label")]),
        EntityDescription("Unused", attributes: [AttributeDescription("x", .int)]),
    ])

    // MARK: Random graphs

    private static func randomDouble(_ rng: inout SeededRandom) -> Double {
        let specials: [Double] = [
            0, -0.0, .infinity, -.infinity, .nan, Double(bitPattern: 0x7FF8_0000_0000_BEEF), .ulpOfOne,
            .leastNonzeroMagnitude, .greatestFiniteMagnitude, -1e300,
        ]
        switch rng.next() % 4 {
        case 0: return specials[Int(rng.next() % UInt64(specials.count))]
        case 1: return Double(rng.next() % 1000)
        default: return Double(bitPattern: rng.next())
        }
    }

    private static func randomString(_ rng: inout SeededRandom) -> String {
        let pieces = ["", "a", "héllo", "日本語", "👍🏽", "x y z", "\u{0}", "Ω≈ç√", "tab\tand\nline"]
        switch rng.next() % 5 {
        case 0: return pieces[Int(rng.next() % UInt64(pieces.count))]
        case 1: return String(repeating: "long ", count: Int(rng.next() % 300))
        default:
            return String((0..<(rng.next() % 40)).map { _ in Character(UnicodeScalar(97 + UInt8(rng.next() % 27))) })
        }
    }

    static func randomValue(_ type: AttributeType, _ rng: inout SeededRandom) -> Value {
        switch type {
        case .bool: return .bool(rng.next() % 2 == 0)
        case .int, .int64:
            let extremes: [Int64] = [.min, .max, 0, -1, 1]
            return .int(rng.next() % 5 == 0 ? extremes[Int(rng.next() % 5)] : Int64(bitPattern: rng.next()) >> 20)
        case .int8: return .int(Int64(Int8(truncatingIfNeeded: rng.next())))
        case .int16: return .int(Int64(Int16(truncatingIfNeeded: rng.next())))
        case .int32: return .int(Int64(Int32(truncatingIfNeeded: rng.next())))
        case .double: return .double(randomDouble(&rng))
        case .float: return .double(Double(Float(bitPattern: UInt32(truncatingIfNeeded: rng.next()))))
        case .string: return .string(randomString(&rng))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: randomDouble(&rng)))
        case .data: return .data(Data((0..<(rng.next() % 20)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }))
        case .uuid:
            var b = [UInt8](repeating: 0, count: 16)
            for i in 0..<16 { b[i] = UInt8(truncatingIfNeeded: rng.next()) }
            return .uuid(
                UUID(
                    uuid: (
                        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                        b[15]
                    )))
        case .url: return .url(URL(string: "https://example.com/\(rng.next() % 1000)?q=é")!)
        case .decimal: return .decimal(Decimal(Int(Int64(bitPattern: rng.next()) % 100_000)) / 100)
        case .stringArray: return .list((0..<(rng.next() % 5)).map { _ in .string(randomString(&rng)) })
        case .intArray: return .list((0..<(rng.next() % 5)).map { _ in randomValue(.int, &rng) })
        case .stringSet:
            let strings = (0..<(rng.next() % 5)).map { _ in Value.string(randomString(&rng)) }
            return AttributeType.stringSet.normalized(.list(strings))!
        case .stringDictionary:
            let keys = Set((0..<(rng.next() % 4)).map { _ in randomString(&rng) }).sorted()
            return .list(keys.flatMap { [Value.string($0), .string(randomString(&rng))] })
        case .metadataDictionary:
            // Every kind of value under random keys: null, Booleans, ints, doubles (NaN payloads, -0.0), strings.
            let keys = Set((0..<(rng.next() % 5)).map { _ in randomString(&rng) }).sorted()
            return .list(
                keys.flatMap { key -> [Value] in
                    let kinds: [AttributeType] = [.bool, .int, .double, .string]
                    let k = Int(rng.next() % 5)
                    return [.string(key), k == 4 ? .null : randomValue(kinds[k], &rng)]
                })
        }
    }

    /// A graph built through the table primitives: `rows` things with gaps in their serials (some huge), nulls in
    /// every optional column, parent/children links, tags with dangling ends both ways, deleted objects.
    static func randomGraph(seed: UInt64, rows: Int) -> Graph {
        var rng = SeededRandom(seed: seed)
        var graph = Graph(schema: schema)
        let thing = schema.layouts[0]
        let tag = schema.layouts[1]
        var serials: [UInt64] = []
        var serial: UInt64 = 0
        for n in 0..<rows {
            switch rng.next() % 50 {
            case 0: serial += 1 + rng.next() % 5_000
            case 1 where n == rows / 2: serial += 1 << 40
            default: serial += 1
            }
            var values: [Value] = thing.attributes.map { attribute in
                attribute.isOptional && rng.next() % 4 == 0 ? .null : randomValue(attribute.type, &rng)
            }
            values[14] = .int(Int64(n) * 7 - 1_000)  // unique key
            if seed % 2 == 0 { values = values.enumerated().map { $0.offset < 14 ? .null : $0.element } }
            let inserted = graph.tables[0].insertRow(serial, values, layout: thing)
            #expect(inserted)
            serials.append(serial)
        }
        let tagCount = max(1, rows / 10)
        for t in 1...UInt64(tagCount) {
            let inserted = graph.tables[1].insertRow(t * 3, [.string(randomString(&rng))], layout: tag)
            #expect(inserted)
        }
        for s in serials where rng.next() % 3 == 0 {
            let parent = serials[Int(rng.next() % UInt64(serials.count))]
            guard parent != s else { continue }
            _ = graph.tables[0].addTarget(s, 0, parent, layout: thing)
            _ = graph.tables[0].addTarget(parent, 1, s, layout: thing)
        }
        for s in serials where rng.next() % 2 == 0 {
            for _ in 0..<(rng.next() % 4) {
                let t = (1 + rng.next() % UInt64(tagCount + 3)) * 3  // some tags do not exist: dangling
                _ = graph.tables[0].addTarget(s, 2, t, layout: thing)
                if graph.tables[1].contains(t) { _ = graph.tables[1].addTarget(t, 0, s, layout: tag) }
            }
        }
        // A tag pointing at a thing that is gone, and deleted things whose serials stay allocated.
        _ = graph.tables[1].addTarget(3, 0, serial + 10, layout: tag)
        for s in serials where rng.next() % 17 == 0 {
            var targets: [UInt64] = []
            if let (leaf, r) = graph.tables[0].locate(s) { targets = leaf.targets(r, 0) + leaf.targets(r, 1) }
            if targets.isEmpty { graph.tables[0].removeRow(s, layout: thing) }
        }
        graph.tables[0].maxSerial = serial + 100
        graph.sequence = 40 + seed
        return graph
    }

    static func writeAndLoad(_ graph: Graph) throws -> (Graph, [UInt8]) {
        let disk = SimulatedFileLayer()
        try disk.createDirectory("/c")
        _ = try Checkpoint.write(graph, layer: disk, directory: "/c")
        let name = JournalFormat.checkpointName(graph.sequence)
        let file = try disk.open("/c/" + name, .read)
        defer { file.close() }
        return (try Checkpoint.load(file, name: name, schema: graph.schema), disk.contents("/c/" + name)!)
    }

    /// Creates a file on the simulated disk holding `bytes`.
    static func put(_ disk: SimulatedFileLayer, _ path: String, _ bytes: [UInt8]) throws {
        try disk.open(path, .create).close()
        disk.setContents(path, bytes)
    }

    static func expectEqual(_ graph: Graph, _ loaded: Graph) {
        #expect(GraphEquality.differences(graph, loaded) == [])
        #expect(loaded.invariantViolations() == [])
        for e in graph.tables.indices {
            #expect(loaded.tables[e].count == graph.tables[e].count)
            for (a, b) in zip(graph.tables[e].indexes, loaded.tables[e].indexes) {
                #expect(a.allSerials == b.allSerials)
            }
        }
    }

    @Test(arguments: [(1, 300), (2, 300), (3, 9_000), (4, 70), (5, 1)])
    func randomGraphsLoadBackEqual(seed: UInt64, rows: Int) throws {
        let graph = Self.randomGraph(seed: seed, rows: rows)
        #expect(graph.invariantViolations() == [])
        let (loaded, bytes) = try Self.writeAndLoad(graph)
        Self.expectEqual(graph, loaded)
        #expect(bytes[8] == UInt8(JournalFormat.version) && bytes[9] == 0, "written as this build's format version")
        #expect(loaded.sequence == graph.sequence)
        #expect(loaded.maxSerials == graph.maxSerials)
    }

    @Test func anEmptyGraphLoadsBackEmpty() throws {
        var graph = Graph(schema: Self.schema)
        graph.sequence = 3
        let (loaded, _) = try Self.writeAndLoad(graph)
        Self.expectEqual(graph, loaded)
        #expect(loaded.objectCount == 0)
    }

    @Test func chunksCutWithinALeafLoadTheSame() throws {
        let graph = Self.randomGraph(seed: 7, rows: 500)
        let layout = Self.schema.layouts[0]
        // Chunks of 1 to 69 rows, cut anywhere, so leaves continue from one chunk into the next.
        var rng = SeededRandom(seed: 99)
        var chunks: [[CheckpointColumns.Part]] = [[]]
        for (key, leaf) in graph.tables[0].leaves {
            var m = leaf.present
            while m != 0 {
                let bit = m & (0 &- m)
                m &= m - 1
                chunks[chunks.count - 1].append(CheckpointColumns.Part(key: key, leaf: leaf, mask: bit))
                if rng.next() % 40 == 0 { chunks.append([]) }
            }
        }
        var loader = GraphBulkLoader(schema: Self.schema)
        for parts in chunks where !parts.isEmpty {
            let payload = CheckpointColumns.encode(entity: 0, layout: layout, parts: parts, level: 1)
            try loader.add(CheckpointColumns.decode(payload, schema: Self.schema, context: "t"), context: "t")
        }
        #expect(chunks.count > 5)
        let tables = loader.finish()
        for (a, b) in zip(graph.tables[0].indexes, tables[0].indexes) { #expect(a.allSerials == b.allSerials) }
        var rebuilt = Graph(schema: Self.schema)
        rebuilt.tables[0] = tables[0]
        rebuilt.tables[0].maxSerial = graph.tables[0].maxSerial
        var original = graph
        original.tables[1] = rebuilt.tables[1]
        #expect(original.differences(from: rebuilt) == [])
    }

    @Test func chunksOutOfOrderAreDamage() throws {
        let graph = Self.randomGraph(seed: 8, rows: 200)
        let layout = Self.schema.layouts[0]
        let leaves = Array(graph.tables[0].leaves)
        let first = CheckpointColumns.encode(
            entity: 0, layout: layout,
            parts: [CheckpointColumns.Part(key: leaves[0].key, leaf: leaves[0].value, mask: leaves[0].value.present)],
            level: 1)
        var loader = GraphBulkLoader(schema: Self.schema)
        let chunk = try CheckpointColumns.decode(first, schema: Self.schema, context: "t")
        try loader.add(chunk, context: "t")
        #expect(throws: TrellisError.self) { try loader.add(chunk, context: "t") }
    }

    // MARK: Damage

    /// Every third byte of every chunk changed in turn, checksums made right again: each load either throws a classified
    /// problem or returns a graph that passes its invariant checks; none traps.
    @Test func damageBehindFixedChecksumsIsRefusedOrHarmless() throws {
        let graph = Self.randomGraph(seed: 11, rows: 60)
        let (_, bytes) = try Self.writeAndLoad(graph)
        let name = JournalFormat.checkpointName(graph.sequence)
        let headerLength = Int(ByteMutators.u32(bytes, 12))
        var frames: [Int] = []
        var offset = headerLength
        while offset < bytes.count {
            frames.append(offset)
            offset += RecordFrame.align(FrameHeader.currentSize + Int(ByteMutators.u32(bytes, offset + 4)))
        }
        #expect(frames.count >= 3)
        var refused = 0
        var rng = SeededRandom(seed: 12)
        for frame in frames {
            let start = frame + FrameHeader.currentSize
            let end = frame + FrameHeader.currentSize + Int(ByteMutators.u32(bytes, frame + 4))
            for position in stride(from: start, to: end, by: 3) {
                var damaged = bytes
                damaged[position] ^= UInt8(truncatingIfNeeded: 1 | rng.next())
                damaged = ByteMutators.fixFrameChecksum(damaged, at: frame)
                let disk = SimulatedFileLayer()
                try disk.createDirectory("/c")
                try Self.put(disk, "/c/" + name, damaged)
                let file = try disk.open("/c/" + name, .read)
                defer { file.close() }
                do {
                    let loaded = try Checkpoint.load(file, name: name, schema: Self.schema)
                    // A changed value or target loads as written; the trees' own checks (which trap) must pass, and
                    // the footer's counts must still hold.
                    _ = loaded.invariantViolations(limit: 1)
                    #expect(loaded.objectCount == graph.objectCount)
                } catch let problem as JournalProblem {
                    #expect(problem.file == name)
                    refused += 1
                }
            }
        }
        #expect(refused > 0)
    }
}

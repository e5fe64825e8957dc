import Foundation
import Testing

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

    // MARK: The codec's pieces

    @Test func intsBlocksRoundTripAtEveryWidth() throws {
        var rng = SeededRandom(seed: 5)
        var cases: [[Int64]] = [
            [], [0], [.min], [.max, .min], [.min, .max, 0], Array(1...1000), Array(repeating: 7, count: 9),
        ]
        for width in 0...64 {
            cases.append(
                (0..<37).map { _ in
                    width == 64 ? Int64(bitPattern: rng.next()) : Int64(rng.next() >> UInt64(64 - width)) - 3
                })
        }
        cases.append((0..<500).map { Int64($0) * 1_000_000 + Int64(rng.next() % 3) })
        for values in cases {
            let bytes = ByteWriter.bytes { w in
                w.ints(values)
                w.u8(0xEE)
            }
            var r = ByteReader(bytes, context: "t")
            #expect(try r.ints(count: values.count) == values)
            #expect(try r.u8() == 0xEE)
        }
        let run = ByteWriter.bytes { $0.ints(Array(1...10_000)) }
        #expect(run.count < 16, "a run of consecutive numbers packs to its first value and a zero width")
    }

    @Test func textPacksToItsAlphabetAndBack() throws {
        var rng = SeededRandom(seed: 13)
        for size in [1, 2, 3, 27, 33, 64] {
            for count in [1, 7, 8, 9, 64, 1_001] {
                let alphabet = (0..<size).map { UInt8(truncatingIfNeeded: 200 - $0 * 3) }
                let text = (0..<count).map { _ in alphabet[Int(rng.next() % UInt64(size))] }
                let packed = try #require(CheckpointColumns.packAlphabet(text))
                var r = ByteReader(packed, context: "t")
                #expect(try r.unpackAlphabet(count: count) == text)
                #expect(r.isAtEnd)
            }
        }
        #expect(CheckpointColumns.packAlphabet(Array(0...64)) == nil, "more than 64 distinct bytes")
        // A one-letter alphabet takes no bits: packed text beyond 16 MiB is refused before anything is allocated.
        var one = ByteReader([0, 97], context: "t")
        #expect(try one.unpackAlphabet(count: 5) == Array("aaaaa".utf8))
        func chunk(length: Int) -> [UInt8] {
            let lengths = ByteWriter.bytes { lengths in
                lengths.u8(0)
                lengths.ints([Int64(length)])
                lengths.u8(1)
            }
            return ByteWriter.bytes { w in
                w.varint(1)  // Tag
                w.varint(1)
                w.section([0, 2, 0], level: 1, strategies: [])  // serial 1
                w.section(lengths, level: 1, strategies: [])
                w.section([0, 97], level: 1, strategies: [])  // alphabet "a", no code bits
                w.section([0, 0, 0, 0, 0, 0], level: 1, strategies: [])  // no targets
            }
        }
        let small = try CheckpointColumns.decode(chunk(length: 3), schema: Self.schema, context: "t")
        #expect(small.columns[0].text == Array("aaa".utf8))
        #expect(throws: TrellisError.self) {
            try CheckpointColumns.decode(chunk(length: 20_000_000), schema: Self.schema, context: "t")
        }
        // A code past the alphabet is damage.
        var r = ByteReader([2, 10, 20, 30, 0b1111_1111], context: "t")
        #expect(throws: TrellisError.self) { try r.unpackAlphabet(count: 4) }
        // Wherever it is: in the groups of eight codes unpacked by pairs, those near the end read byte by byte, and
        // the last codes, for every width.
        for size in [3, 5, 27, 33, 63] {
            let width = 64 - (size - 1).leadingZeroBitCount
            let count = 203
            let text = (0..<count).map { UInt8(truncatingIfNeeded: 100 + $0 % size) }
            let packed = try #require(CheckpointColumns.packAlphabet(text))
            var good = ByteReader(packed, context: "t")
            #expect(try good.unpackAlphabet(count: count) == text)
            for position in [0, 7, 8, 100, 150, count - 12, count - 9, count - 3, count - 1] {
                var damaged = packed
                // Code `position` starts at bit position × width of the codes, after the size and alphabet bytes.
                for j in 0..<width {
                    let bit = position * width + j
                    damaged[1 + size + bit >> 3] |= 1 << UInt8(bit & 7)
                }
                var bad = ByteReader(damaged, context: "t")
                #expect(throws: TrellisError.self, "size \(size), code \(position)") {
                    try bad.unpackAlphabet(count: count)
                }
            }
        }
        // An alphabet larger than any writer packs (65…256 bytes) is damage, not an index past the code table.
        for size in [65, 200, 256] {
            var big = ByteReader(
                [UInt8(size - 1)] + (0..<size).map { UInt8($0) } + [UInt8](repeating: 0xff, count: 8), context: "t")
            #expect(throws: TrellisError.self) { try big.unpackAlphabet(count: 8) }
        }
    }

    @Test func inPlaceSortSortsLikeTheStandardLibrary() {
        var rng = SeededRandom(seed: 6)
        for n in [0, 1, 2, 3, 16, 17, 100, 1_000, 20_000] {
            for spread in [3, 1 << 20] {
                var a = ContiguousArray((0..<n).map { _ in Int(rng.next() % UInt64(spread)) })
                let expected = a.sorted()
                a.sortWithoutBuffer()
                #expect(Array(a) == expected)
                a.sortWithoutBuffer()
                #expect(Array(a) == expected, "sorted input")
                a.reverse()
                a.sortWithoutBuffer()
                #expect(Array(a) == expected, "reversed input")
            }
        }
    }

    @Test func radixSortSortsScalarEntries() {
        var rng = SeededRandom(seed: 14)
        for n in [0, 1, 65, 100, 5_000] {
            for spread in [UInt64(0), 1, 3, 5_000, .max] {
                let base = rng.next() % 1_000
                let a = ContiguousArray(
                    (0..<n).map { _ in
                        ScalarEntry(
                            bits: spread == .max ? rng.next() : base + rng.next() % (spread + 1), serial: rng.next())
                    })
                let expected = a.sorted()
                #expect(Array(ContiguousArray.radixSorted(count: a.count) { a.forEach($0) }) == expected)
            }
        }
        // Encoded doubles bunch in the upper octaves: buckets split again.
        for n in [100, 5_000, 40_000] {
            let a = ContiguousArray(
                (0..<n).map { _ in
                    ScalarEntry(
                        bits: ScalarCoding.encode(Double(rng.next() >> 11) * 0x1p-53 * 1000 + 1), serial: rng.next())
                })
            let expected = a.sorted()
            #expect(Array(ContiguousArray.radixSorted(count: a.count) { a.forEach($0) }) == expected)
        }
    }

    @Test func bulkBuiltTreesMeetTheirInvariants() {
        for fanout in [4, 5, 64] {
            for n in [0, 1, 2, 3, 4, 5, 7, 31, 32, 33, 63, 64, 65, 96, 97, 200, 4_097, 10_000] {
                let keys = ContiguousArray((0..<n).map { $0 * 3 })
                let tree = SortedTree(ascendingKeys: keys, values: ContiguousArray(keys.map { -$0 }), fanout: fanout)
                tree.checkInvariants()
                #expect(tree.count == n)
                var seen: [Int] = []
                tree.forEach { key, value in
                    #expect(value == -key)
                    seen.append(key)
                }
                #expect(seen == Array(keys))
                var grown = tree
                for k in stride(from: 1, to: 3 * n, by: 7) { grown[k] = 0 }
                grown.checkInvariants()
            }
        }
        for keys in [[UInt64](), [0], [63, 64], Array(0..<5_000), [1, 1 << 20, 1 << 40, .max]] {
            let trie = SerialTrie(ascendingKeys: keys, values: keys.map { ~$0 })
            trie.checkInvariants()
            #expect(trie.count == keys.count)
            for k in keys { #expect(trie[k] == ~k) }
            let set = SerialTrie<Void>(ascendingKeys: keys, values: EmptyCollection())
            set.checkInvariants()
            #expect(set.count == keys.count)
        }
    }

    // MARK: Version 1

    /// A version-1 checkpoint of `graph`, written as the version-1 writer did (row-major chunks of `rowsPerChunk`).
    static func versionOneCheckpoint(_ graph: Graph, rowsPerChunk: Int = 50) -> [UInt8] {
        let salt: UInt64 = 0x5EED
        var out = FileHeader(
            magic: JournalFormat.checkpointMagic, id: 0, sequence: graph.sequence, salt: salt,
            fingerprint: graph.schema.fingerprint, schemaBytes: SchemaCodec.encode(graph.schema), version: 1
        ).encoded()
        var chunkNumber: UInt64 = 0
        func emit(_ type: RecordType, _ payload: [UInt8]) {
            chunkNumber += 1
            out += RecordFrame.encode(
                type: type, payload: payload, sequence: chunkNumber, time: 0, salt: salt, compressionLevel: 6)
        }
        for (e, layout) in graph.schema.layouts.enumerated() {
            let rows = Array(graph.rows(entity: UInt32(e)))
            for start in stride(from: 0, to: rows.count, by: rowsPerChunk) {
                let chunk = rows[start..<min(start + rowsPerChunk, rows.count)]
                let payload = ByteWriter.bytes { w in
                    w.varint(e)
                    w.varint(chunk.count)
                    for row in chunk {
                        w.varint(row.id.serial)
                        for a in 0..<layout.attributes.count { w.value(row.value(at: a)) }
                        for k in 0..<layout.relationships.count {
                            let targets = row.targetSerials(RelationshipKey(entity: UInt32(e), index: k))
                            w.varint(targets.count)
                            for t in targets { w.varint(t) }
                        }
                    }
                }
                emit(.checkpointRows, payload)
            }
        }
        let footer = ByteWriter.bytes { footer in
            footer.varint(graph.sequence)
            footer.varint(graph.schema.layouts.count)
            for (e, maxSerial) in graph.maxSerials.enumerated() {
                footer.varint(maxSerial)
                footer.varint(graph.count(entity: UInt32(e)))
            }
            footer.varint(chunkNumber)
        }
        emit(.checkpointFooter, footer)
        return out
    }

    @Test func versionOneCheckpointsStillLoad() throws {
        let graph = Self.randomGraph(seed: 9, rows: 400)
        let disk = SimulatedFileLayer()
        try disk.createDirectory("/c")
        let name = JournalFormat.checkpointName(graph.sequence)
        try Self.put(disk, "/c/" + name, Self.versionOneCheckpoint(graph))
        let file = try disk.open("/c/" + name, .read)
        defer { file.close() }
        let loaded = try Checkpoint.load(file, name: name, schema: Self.schema)
        Self.expectEqual(graph, loaded)
    }

    @Test func aVersionOneStoreOpensAndMovesToTheCurrentVersionAtItsNextCompaction() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open()
        try JournalWorkload.run(store, seed: 21, commits: 40)
        try store.compact()
        try JournalWorkload.run(store, seed: 22, commits: 20)
        let expected = store.snapshot
        try store.close()

        // Turn every file into what version 1 wrote: the same segment and manifest bytes with version 1, and the
        // checkpoint in rows.
        let dir = SimulatedFileLayer.storePath
        for name in disk.names() {
            let path = dir + "/" + name
            var bytes = disk.contents(path)!
            if name == JournalFormat.manifestName {
                bytes[8] = 1
                bytes = ByteMutators.setU32(bytes, at: 64, Zlib.crc32(0, bytes[0..<64]))
            } else if let sequence = JournalFormat.checkpointSequence(name) {
                let file = try disk.open(path, .read)
                let graph = try Checkpoint.load(file, name: name, schema: JournalWorkload.schema)
                file.close()
                #expect(graph.sequence == sequence)
                bytes = Self.versionOneCheckpoint(graph, rowsPerChunk: 7)
            } else if JournalFormat.segmentID(name) != nil {
                bytes[8] = 1
                bytes = ByteMutators.fixHeaderChecksum(bytes)
            }
            disk.setContents(path, bytes)
        }
        #expect(
            disk.names().allSatisfy {
                disk.contents(dir + "/" + $0)!.count < 10 || $0 == "LOCK" || disk.contents(dir + "/" + $0)![8] == 1
            })

        let reopened = try disk.open()
        #expect(GraphEquality.differences(expected, reopened.snapshot) == [])
        #expect(reopened.snapshot.invariantViolations() == [])
        try JournalWorkload.run(reopened, seed: 23, commits: 10)
        try reopened.compact()
        let after = reopened.snapshot
        try reopened.close()
        let checkpoint = disk.names().first { JournalFormat.checkpointSequence($0) != nil }!
        #expect(disk.contents(dir + "/" + checkpoint)![8] == UInt8(JournalFormat.version))
        let third = try disk.open()
        #expect(GraphEquality.differences(after, third.snapshot) == [])
        try third.close()
    }

    @Test func aCheckpointOfAFutureVersionIsRefusedByName() throws {
        let graph = Self.randomGraph(seed: 10, rows: 50)
        let (_, bytes) = try Self.writeAndLoad(graph)
        var future = bytes
        future[8] = UInt8(JournalFormat.version + 1)
        future = ByteMutators.fixHeaderChecksum(future)
        let disk = SimulatedFileLayer()
        try disk.createDirectory("/c")
        let name = JournalFormat.checkpointName(graph.sequence)
        try Self.put(disk, "/c/" + name, future)
        let file = try disk.open("/c/" + name, .read)
        defer { file.close() }
        #expect {
            _ = try Checkpoint.load(file, name: name, schema: Self.schema)
        } throws: { error in
            guard let problem = error as? JournalProblem else { return false }
            return problem.kind == .header && problem.message.contains("format version \(JournalFormat.version + 1)")
        }
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
            offset += RecordFrame.align(FrameHeader.size + Int(ByteMutators.u32(bytes, offset + 4)))
        }
        #expect(frames.count >= 3)
        var refused = 0
        var rng = SeededRandom(seed: 12)
        for frame in frames {
            let start = frame + FrameHeader.size
            let end = frame + FrameHeader.size + Int(ByteMutators.u32(bytes, frame + 4))
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

import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisJournal
@testable import TrellisStore

/// A record a save waits for (`.perCommit`, at the default level 1) counts as large from
/// `RecordFrame.durableLargePayload` (16 KiB), not 64 KiB: from there it is stored deflated only when Huffman coding
/// halves it. The same record in a store whose saves do not wait, or at a level above 1, is deflated at that level as
/// before, and every form reads back.
@Suite struct DurableRecordCompressionTests {
    static let schema = try! Schema([EntityDescription("Page", attributes: [.init("text", .string)])])

    /// `pages` texts of 1,000 characters: random letters and digits (deflate saves about a quarter, Huffman coding
    /// cannot halve them), or one letter repeated (both halve them many times over).
    static func texts(_ pages: Int, repetitive: Bool, seed: UInt64) -> [String] {
        var random = SeededRandom(seed: seed)
        return (0..<pages).map { _ in
            repetitive ? String(repeating: "x", count: 1_000) : randomText(&random)
        }
    }

    static func randomText(_ random: inout SeededRandom) -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String((0..<1_000).map { _ in letters[Int(random.next() % UInt64(letters.count))] })
    }

    /// Commits the texts in one save, then reads the journal's one record and reopens the store: returns whether the
    /// record is stored deflated, its stored and payload bytes, and whether the reopened store holds every text.
    static func commitAndRead(
        _ texts: [String], durability: StoreOptions.Durability, level: Int = 1
    ) throws -> (compressed: Bool, stored: Int, payload: Int, readBack: Bool) {
        let disk = SimulatedFileLayer()
        var options = disk.options(durability)
        options.compressionLevel = level
        let store = try disk.open(schema, options)
        try store.write { tx in
            for text in texts { try tx.insert("Page", ["text": .string(text)]) }
        }
        try store.close()
        var records: [JournalRecord] = []
        let problems = try JournalReader(path: SimulatedFileLayer.storePath, layer: disk).forEachRecord {
            records.append($0)
        }
        #expect(problems.isEmpty && records.count == 1, "\(problems), \(records.count) records")
        let reopened = try disk.open(schema, options)
        defer { try? reopened.close() }
        let text = try schema.attribute("Page", "text")
        let stored = reopened.snapshot.rows(entity: try schema.entity("Page")).compactMap { $0.string(text) }
        guard let record = records.first else { return (false, 0, 0, false) }
        return (record.isCompressed, record.storedBytes, record.uncompressedBytes, stored.sorted() == texts.sorted())
    }

    @Test func aDurableRecordFromSixteenKiBIsStoredAsItIsWhenHuffmanCodingCannotHalveIt() throws {
        let texts = Self.texts(20, repetitive: false, seed: 1)
        let durable = try Self.commitAndRead(texts, durability: .perCommit)
        #expect(durable.payload >= RecordFrame.durableLargePayload && durable.payload < RecordFrame.huffmanOnlyPayload)
        #expect(!durable.compressed && durable.stored == durable.payload && durable.readBack, "\(durable)")
        // Saves that do not wait: the same record deflated at level 1, about three quarters of its bytes.
        for durability in [StoreOptions.Durability.interval(1), .none] {
            let relaxed = try Self.commitAndRead(texts, durability: durability)
            #expect(relaxed.payload == durable.payload)
            #expect(
                relaxed.compressed && relaxed.stored < relaxed.payload * 4 / 5 && relaxed.readBack,
                "\(durability): \(relaxed)")
        }
    }

    @Test func aDurableRecordThatHuffmanCodingHalvesIsStoredDeflated() throws {
        let durable = try Self.commitAndRead(Self.texts(20, repetitive: true, seed: 2), durability: .perCommit)
        #expect(durable.payload >= RecordFrame.durableLargePayload)
        #expect(durable.compressed && durable.stored * 2 <= durable.payload && durable.readBack, "\(durable)")
        // Huffman coding alone, as the rule deflates: never better than 8:1 (level 1 makes about 200:1 of this).
        #expect(durable.stored * 8 >= durable.payload, "\(durable)")
    }

    @Test func aDurableRecordBelowSixteenKiBIsDeflatedAtLevelOneAsBefore() throws {
        let durable = try Self.commitAndRead(Self.texts(8, repetitive: false, seed: 3), durability: .perCommit)
        #expect(durable.payload < RecordFrame.durableLargePayload)
        #expect(durable.compressed && durable.stored < durable.payload * 4 / 5 && durable.readBack, "\(durable)")
    }

    /// The rule itself, on one payload: below `largeFrom` any saving is kept; from it, only halving.
    @Test func theLargeRuleStartsWhereTheCallerSays() throws {
        let payload = Array(Self.texts(20, repetitive: false, seed: 4).joined().utf8)
        #expect(RecordFrame.deflated(payload, level: 1) != nil)
        #expect(RecordFrame.deflated(payload, level: 1, largeFrom: payload.count + 1) != nil)
        #expect(RecordFrame.deflated(payload, level: 1, largeFrom: payload.count) == nil)
        let repetitive = Array(Self.texts(20, repetitive: true, seed: 5).joined().utf8)
        let packed = try #require(RecordFrame.deflated(repetitive, level: 1, largeFrom: 16 << 10))
        #expect(packed.count * 2 <= repetitive.count && packed.count * 8 >= repetitive.count)
        #expect(Zlib.decompress(packed[...], count: repetitive.count) == repetitive)
    }

    /// Across processes, as an app meets it: a child saves one note of 20,000 random letters through a context (the
    /// default `.perCommit` store, level 1), which level 1 would shrink by about a quarter but Huffman coding cannot
    /// halve; the journal holds it as it is, and another child opens the store and prints the note back whole.
    @Test func aRawDurableRecordReopensInAnotherProcess() throws {
        let temporary = TemporaryDirectory()
        var random = SeededRandom(seed: 8)
        let text = (0..<20).map { _ in Self.randomText(&random) }.joined()
        let saved = try CrashChild.run(["notes", "--dir", temporary.store.path, "--add", text])
        #expect(saved.exitStatus == 0 && !saved.killed && saved.lines.last == "closed 1", "\(saved.lines.suffix(2))")
        var records: [JournalRecord] = []
        let problems = try JournalReader(directory: temporary.store).forEachRecord { records.append($0) }
        #expect(problems.isEmpty && records.count == 1, "\(problems), \(records.count) records")
        let record = try #require(records.first)
        #expect(
            record.uncompressedBytes >= RecordFrame.durableLargePayload
                && record.uncompressedBytes < RecordFrame.huffmanOnlyPayload)
        #expect(!record.isCompressed && record.storedBytes == record.uncompressedBytes, "\(record.storedBytes)")
        #expect(RecordFrame.deflated(Array(text.utf8), level: 1, largeFrom: .max) != nil, "level 1 would deflate it")
        let reopened = try CrashChild.run(["notes", "--dir", temporary.store.path])
        #expect(reopened.exitStatus == 0 && !reopened.killed, "\(reopened.lines.suffix(2))")
        let notes = reopened.lines.filter { $0.hasPrefix("note ") }
        #expect(notes.count == 1 && notes.first?.hasSuffix("\t" + text) == true)
    }

    /// The price of the rule, and the way out: one long text repeated in many objects halves only through repeated
    /// strings, which Huffman coding does not see, so at level 1 the durable record is stored as it is; a store that
    /// asks for level 6 keeps deflating its durable records and stores it in a small fraction.
    @Test func aLevelAboveOneKeepsDurableRecordsDeflated() throws {
        var random = SeededRandom(seed: 6)
        let text = Self.randomText(&random)
        let texts = Array(repeating: text, count: 20)
        let levelOne = try Self.commitAndRead(texts, durability: .perCommit)
        #expect(!levelOne.compressed && levelOne.stored == levelOne.payload && levelOne.readBack, "\(levelOne)")
        let levelSix = try Self.commitAndRead(texts, durability: .perCommit, level: 6)
        #expect(levelSix.compressed && levelSix.stored * 10 < levelSix.payload && levelSix.readBack, "\(levelSix)")
        // Random letters at level 6: deflated, as any record under 64 KiB at that level.
        let random20 = try Self.commitAndRead(
            Self.texts(20, repetitive: false, seed: 7), durability: .perCommit, level: 6)
        #expect(random20.compressed && random20.stored < random20.payload * 4 / 5, "\(random20)")
    }
}

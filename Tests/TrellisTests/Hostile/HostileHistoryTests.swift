import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Issue 23, items 6 and 7 (rows D6 and D7 of the crash README): history that contradicts the state it applies to
/// (an update's old value, a delete's values and targets) is damage that `verify` reports; a checkpoint chunk claims
/// no more rows than a writer puts in one.
@Suite struct HostileHistoryTests {
    static let schema = try! Schema([
        EntityDescription(
            "Item", attributes: [AttributeDescription("title", .string), AttributeDescription("score", .double)])
    ])

    /// A store of two items (one with score -0.0, one NaN) updated and one deleted, closed; its item ids.
    func makeStore(_ directory: URL) throws -> (ObjectID, ObjectID, UInt64) {
        let store = try Store(directory: directory, schema: Self.schema, options: StoreOptions(compaction: .manual))
        var ids: [ObjectID] = []
        try store.write { tx in
            ids.append(try tx.insert("Item", ["title": "a", "score": .double(-0.0)]))
            ids.append(try tx.insert("Item", ["title": "b", "score": .double(.nan)]))
            ids.append(try tx.insert("Item", ["title": "c", "score": .double(1)]))
        }
        try store.write { tx in
            try tx.set(ids[0], "title", "a2")
            try tx.set(ids[1], "score", .double(0.0))
            try tx.delete(ids[2])
        }
        let sequence = store.snapshot.sequence
        try store.close()
        return (ids[0], ids[1], sequence)
    }

    /// Writes `changes` as the record after the last one of the store's last segment, with a valid checksum.
    func append(_ changes: ChangeSet, to directory: URL, sequence: UInt64) throws {
        let reader = try JournalReader(directory: directory)
        var end = 0
        var file = ""
        try reader.forEachRecord { record in
            file = record.file
            end = RecordFrame.align(record.offset + FrameHeader.currentSize + record.storedBytes)
        }
        let url = directory.appendingPathComponent(file)
        let bytes = [UInt8](try Data(contentsOf: url))
        let header = try FileHeader.parse(
            Array(bytes[0..<Int(UInt32(bytes[12]) | UInt32(bytes[13]) << 8)]), magic: JournalFormat.segmentMagic,
            file: file)
        // A record of this build's format ends with its author (none).
        var payload = ChangeSetCodec.encode(changes, schema: Self.schema)
        ChangeSetCodec.appendAuthor(nil, to: &payload)
        let frame = RecordFrame.encode(
            type: .changeSet, payload: payload, sequence: sequence,
            time: 0, salt: header.salt, compressionLevel: nil)
        var out = Array(bytes[0..<end]) + frame
        if out.count < bytes.count { out += [UInt8](repeating: 0, count: bytes.count - out.count) }
        try Data(out).write(to: url)
    }

    func verifyProblems(_ changes: ChangeSet) throws -> [JournalProblem] {
        let temporary = TemporaryDirectory()
        let (a, b, sequence) = try makeStore(temporary.store)
        _ = (a, b)
        try append(changes, to: temporary.store, sequence: sequence + 1)
        return try JournalReader(directory: temporary.store).verify().problems
    }

    @Test func historyThatMatchesVerifiesClean() throws {
        let temporary = TemporaryDirectory()
        let (a, b, sequence) = try makeStore(temporary.store)
        let title = AttributeKey(entity: 0, index: 0)
        let score = AttributeKey(entity: 0, index: 1)
        // -0.0 and NaN old values match only when compared bit for bit (NaN: as any NaN).
        let changes = ChangeSet(
            updates: [
                .init(id: a, changes: [.init(attribute: score, old: .double(-0.0), new: .double(2))]),
                .init(id: b, changes: [.init(attribute: title, old: "b", new: "b2")]),
            ],
            deletes: [.init(id: a, values: ["a2", .double(2)], relationships: [])])
        try append(changes, to: temporary.store, sequence: sequence + 1)
        #expect(try JournalReader(directory: temporary.store).verify().problems == [])
    }

    /// Fails on main: verify replayed the update and reported nothing.
    @Test func anUpdateWhoseOldValueContradictsTheObjectIsDamage() throws {
        let temporary = TemporaryDirectory()
        let (a, _, sequence) = try makeStore(temporary.store)
        let score = AttributeKey(entity: 0, index: 1)
        // +0.0 where the object holds -0.0: equal as numbers, not the same value.
        try append(
            ChangeSet(updates: [.init(id: a, changes: [.init(attribute: score, old: .double(0.0), new: .double(5))])]),
            to: temporary.store, sequence: sequence + 1)
        let problems = try JournalReader(directory: temporary.store).verify().problems
        #expect(problems.count == 1)
        #expect(problems.first?.kind == .history)
        #expect(problems.first?.message.contains("update says attribute 'score' was") == true)
    }

    /// Fails before the `history` class: history damage was `decode`, and `trellis verify` pointed at a repair that
    /// keeps it. The store opens with the state the record leads to, and compacting drops the history: verify is
    /// then clean, with the same objects.
    @Test func historyDamageOpensAndCompactingDropsIt() throws {
        let temporary = TemporaryDirectory()
        let (a, _, sequence) = try makeStore(temporary.store)
        let score = AttributeKey(entity: 0, index: 1)
        try append(
            ChangeSet(updates: [.init(id: a, changes: [.init(attribute: score, old: .double(7), new: .double(5))])]),
            to: temporary.store, sequence: sequence + 1)
        #expect(try JournalReader(directory: temporary.store).verify().problems.map(\.kind) == [.history])
        let store = try Store(
            directory: temporary.store, schema: Self.schema, options: StoreOptions(compaction: .manual))
        #expect(store.snapshot.value(a, score) == .double(5))
        try store.compact()
        try store.close()
        let verified = try JournalReader(directory: temporary.store).verify()
        #expect(verified.problems == [])
        #expect(verified.objectCounts == ["Item": 2])
    }

    /// A record that does not apply even without its history (an update of an object that is not there) stays
    /// `decode`.
    @Test func aRecordThatDoesNotApplyIsDecodeNotHistory() throws {
        let temporary = TemporaryDirectory()
        let (_, _, sequence) = try makeStore(temporary.store)
        let missing = ObjectID(entity: 0, serial: 99)
        try append(
            ChangeSet(updates: [
                .init(
                    id: missing,
                    changes: [.init(attribute: AttributeKey(entity: 0, index: 1), old: .double(1), new: .double(2))])
            ]), to: temporary.store, sequence: sequence + 1)
        #expect(try JournalReader(directory: temporary.store).verify().problems.map(\.kind) == [.decode])
    }

    /// Fails on main: verify replayed the delete and reported nothing.
    @Test func aDeleteWhoseValuesContradictTheObjectIsDamage() throws {
        let temporary = TemporaryDirectory()
        let (_, b, sequence) = try makeStore(temporary.store)
        for values: [Value] in [[.null, .null], ["b", .double(0.0), "extra"], ["b", .double(-0.0)]] {
            let temporary = TemporaryDirectory()
            _ = try makeStore(temporary.store)
            try append(
                ChangeSet(deletes: [.init(id: b, values: values, relationships: [])]), to: temporary.store,
                sequence: sequence + 1)
            let problems = try JournalReader(directory: temporary.store).verify().problems
            #expect(problems.map(\.kind) == [.history], "\(values)")
            #expect(problems.first?.message.contains("delete says") == true)
        }
        // The right values verify clean, so it is the values that were refused.
        try append(
            ChangeSet(deletes: [.init(id: b, values: ["b", .double(0.0)], relationships: [])]), to: temporary.store,
            sequence: sequence + 1)
        #expect(try JournalReader(directory: temporary.store).verify().problems == [])
    }

    /// Fails on main: a chunk of 65,536 rows decoded (3,000 such chunks of 89 bytes took over 20 s to load).
    @Test func aChunkOfMoreRowsThanAWriterCutsIsDamage() throws {
        #expect(CheckpointColumns.maxRows == CheckpointColumns.targetRows + 63)
        func chunk(rows: Int) -> [UInt8] {
            ByteWriter.bytes(estimate: 1 << 16) { w in
                w.varint(0)
                w.varint(rows)
                // Serials 1…rows, a title of one repeated letter and a null score: a few bytes a row at most.
                w.section(ByteWriter.bytes(estimate: 16) { $0.ints((1...rows).map { Int64($0) }) }, deflated: nil)
                w.section(
                    ByteWriter.bytes(estimate: 16) { s in
                        s.u8(0)
                        s.ints([Int64](repeating: 1, count: rows))
                        s.u8(0)
                    }, deflated: nil)
                w.section([UInt8](repeating: 0x61, count: rows), deflated: nil)
                w.section([1] + [UInt8](repeating: 0xff, count: rows / 8) + [1], deflated: nil)
                for _ in 0..<8 { w.section([], deflated: nil) }
            }
        }
        let most = CheckpointColumns.maxRows / 64 * 64
        let decoded = try CheckpointColumns.decode(chunk(rows: most), schema: Self.schema, context: "t")
        #expect(decoded.serials.count == most)
        #expect(throws: TrellisError.self) {
            _ = try CheckpointColumns.decode(chunk(rows: 65_536), schema: Self.schema, context: "t")
        }
    }
}

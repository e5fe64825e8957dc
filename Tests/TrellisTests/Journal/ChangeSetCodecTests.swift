import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// The change-set codec (sections encoded ahead, deleted rows read from their leaves, a writer that outgrows its
/// estimate) against a plain reference written value by value with `ByteWriter` and `ByteReader`: the same bytes
/// out, the same change sets and the same errors back.
@Suite struct ChangeSetCodecTests {
    @Test func encodingMatchesTheReferenceByteForByte() throws {
        var random = SeededRandom(seed: 11)
        for round in 0..<200 {
            let changes = Self.randomChangeSet(&random, size: round % 10 == 0 ? 400 : 12)
            let bytes = ChangeSetCodec.encode(changes, schema: Self.schema)
            #expect(bytes == Self.referenceEncode(changes), "round \(round)")
        }
    }

    @Test func decodingReturnsWhatWasEncoded() throws {
        var random = SeededRandom(seed: 12)
        for round in 0..<200 {
            let changes = Self.randomChangeSet(&random, size: round % 10 == 0 ? 400 : 12)
            let back = try ChangeSetCodec.decode(
                ChangeSetCodec.encode(changes, schema: Self.schema), schema: Self.schema, context: "test")
            #expect(Self.identical(back, changes), "round \(round)")
            #expect(Self.identical(try Self.referenceDecode(Self.referenceEncode(changes), context: "test"), back))
        }
    }

    /// A small payload is made with room for a short author only (`authorRoom`): no author, a short one, and ones
    /// longer than the room (which grow the buffer) all append after the change set and read back with it.
    @Test func authorsOfEveryLengthFollowASmallPayload() throws {
        var random = SeededRandom(seed: 15)
        let authors = [nil, "", "app", String(repeating: "é", count: 40), String(repeating: "a", count: 5_000)]
        for (round, author) in authors.enumerated() {
            let changes = Self.randomChangeSet(&random, size: 2)
            var payload = ChangeSetCodec.encodePieces(changes, schema: Self.schema)
            #expect(payload.count == 1, "round \(round)")
            // Room for a short author, not `tailRoom`'s 4 KiB.
            #expect(payload[0].capacity < 1_024, "round \(round): \(payload[0].capacity) bytes for \(payload[0].count)")
            let appended = ChangeSetCodec.appendAuthor(author, to: &payload)
            let bytes = Array(payload.joined())
            #expect(bytes.count == Self.referenceEncode(changes).count + appended)
            let back = try ChangeSetCodec.decodeRecord(
                bytes, schema: Self.schema, context: "test", version: JournalFormat.version)
            #expect(Self.identical(back.changes, changes), "round \(round)")
            #expect(back.author == author, "round \(round)")
        }
    }

    /// A commit's inserts, updates, and edits and deletes encoded ahead (on another thread) and copied in give the
    /// bytes encoding everything at once gives, whichever sections come ahead.
    @Test func sectionsEncodedAheadGiveTheSameBytes() throws {
        var random = SeededRandom(seed: 14)
        for round in 0..<60 {
            let changes = Self.randomChangeSet(&random, size: round % 6 == 0 ? 400 : 12)
            let inserts = ChangeSetCodec.encodeInserts(changes.inserts)
            let updates = ChangeSetCodec.encodeUpdates(changes.updates)
            let rest = ChangeSetCodec.encodeEditsAndDeletes(changes.edits, changes.deletes)
            let reference = Self.referenceEncode(changes)
            for ahead in [
                EncodedSections(inserts: inserts), EncodedSections(updates: updates),
                EncodedSections(editsAndDeletes: rest), EncodedSections(inserts: inserts, updates: updates),
                EncodedSections(inserts: inserts, updates: updates, editsAndDeletes: rest),
            ] {
                #expect(
                    ChangeSetCodec.encode(changes, schema: Self.schema, ahead: ahead) == reference, "round \(round)")
            }
        }
    }

    /// A first insert with small values makes the writer's size estimate far too low: it must grow, not overrun.
    @Test func writerGrowsPastItsEstimate() throws {
        let big = String(repeating: "ü日x", count: 5000)
        var changes = ChangeSet()
        changes.inserts.append(.init(id: ObjectID(entity: 2, serial: 1), values: [.null]))
        for s in 2..<50 {
            changes.inserts.append(
                .init(
                    id: ObjectID(entity: 2, serial: UInt64(s)),
                    values: [.string(big), .data(Data(repeating: UInt8(s), count: 3000)), .int(.min)]))
        }
        let bytes = ChangeSetCodec.encode(changes, schema: Self.schema)
        #expect(bytes.count > 48 * 18000)
        #expect(bytes == Self.referenceEncode(changes))
        #expect(try ChangeSetCodec.decode(bytes, schema: Self.schema, context: "test") == changes)
    }

    /// Damaged payloads: the codec throws exactly the error (message and byte position) the reference decoder throws,
    /// and accepts exactly what it accepts.
    @Test func damagedPayloadsFailLikeTheReference() throws {
        var random = SeededRandom(seed: 13)
        var failures = 0
        for round in 0..<2000 {
            let changes = Self.randomChangeSet(&random, size: 6)
            var bytes = Self.referenceEncode(changes)
            switch round % 4 {
            case 0: bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count))))
            case 1: bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
            case 2:
                bytes[Int(random.next() % UInt64(bytes.count))] ^= 0x80
                bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(random.next() % 13)
            default:
                bytes.insert(
                    UInt8(truncatingIfNeeded: random.next()), at: Int(random.next() % UInt64(min(8, bytes.count + 1))))
            }
            let expected = Result { try Self.referenceDecode(bytes, context: "damaged") }
            let actual = Result { try ChangeSetCodec.decode(bytes, schema: Self.schema, context: "damaged") }
            switch (expected, actual) {
            case (.success(let a), .success(let b)):
                #expect(Self.referenceEncode(a) == Self.referenceEncode(b), "round \(round)")
            case (.failure(let a), .failure(let b)):
                failures += 1
                let (x, y) = (a as? TrellisError, b as? TrellisError)
                #expect(x != nil && x?.code == .corrupt, "round \(round): \(a)")
                #expect(x?.code == y?.code && x?.message == y?.message, "round \(round): \(a) vs \(b)")
            default:
                Issue.record("round \(round): reference \(expected), codec \(actual)")
            }
        }
        #expect(failures > 1000)
    }

    /// Varints near the end of the input and with ten or more bytes after them (the unchecked path) read alike, and
    /// malformed ones fail with the same message either way.
    @Test func varintsReadAlikeWithAndWithoutRoomToSpare() throws {
        for padding in [0, 12] {
            for value: UInt64 in [0, 1, 127, 128, 300, 16383, 16384, 1 << 35, 1 << 62, .max >> 1, 1 << 63, .max] {
                let bytes = ByteWriter.bytes { w in
                    w.varint(value)
                    w.append(repeatElement(0x80, count: padding))
                }
                var r = ByteReader(bytes, context: "test")
                #expect(try r.varint() == value, "\(value) with \(padding) bytes after it")
                #expect(r.position == bytes.count - padding, "\(value) with \(padding) bytes after it")
            }
            // Ten bytes whose last carries more than the 64th bit, and eleven bytes: damage.
            for bad in [[UInt8](repeating: 0xff, count: 9) + [2], [UInt8](repeating: 0x80, count: 10) + [0]] {
                var r = ByteReader(bad + repeatElement(0, count: padding), context: "test")
                let error = try #require(throws: TrellisError.self) { try r.varint() }
                #expect(error.message.hasPrefix("test: varint too long"), "\(error.message)")
            }
        }
    }

    /// Malformed UTF-8 of every kind fails (as `String(validating:)` judges it); valid text of every width reads back.
    @Test func stringsAreValidatedLikeTheReference() throws {
        let bad: [[UInt8]] = [
            [0x80], [0x61, 0xbf], [0xc0, 0xaf], [0xc3], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80],
            [0xf8, 0x88, 0x80, 0x80, 0x80], [0xff], Array("naïve".utf8.dropLast()) + [0xc3],
            Array("0123456789abcdef".utf8) + [0xe0, 0x80, 0x80],
        ]
        let good = ["", "a", "ascii only, longer than sixteen bytes", "é", "€", "𝄞", "日本語のテキスト", "\u{0}\u{7f}"]
        for text in bad + good.map({ Array($0.utf8) }) {
            let bytes = ByteWriter.bytes { w in
                w.varint(1)  // one insert
                w.varint(UInt64(2))  // of a Tag
                w.varint(1)  // serial 1
                w.varint(1)  // with one value
                w.u8(ValueTag.string.rawValue)
                w.blob(text)
                for _ in 0..<3 { w.varint(0) }  // no updates, edits or deletes
            }
            let expected = Result { try Self.referenceDecode(bytes, context: "utf8") }
            let actual = Result { try ChangeSetCodec.decode(bytes, schema: Self.schema, context: "utf8") }
            switch (expected, actual) {
            case (.success(let a), .success(let b)):
                #expect(a == b && b.inserts.first?.values == [.string(String(decoding: text, as: UTF8.self))])
            case (.failure(let a), .failure(let b)):
                #expect(String(validating: text, as: UTF8.self) == nil, "\(text) is valid UTF-8")
                #expect((a as? TrellisError)?.message == (b as? TrellisError)?.message, "\(text)")
                #expect((b as? TrellisError)?.message.contains("invalid UTF-8") == true, "\(text) \(b)")
            default: Issue.record("\(text): reference \(expected), codec \(actual)")
            }
        }
    }

    // MARK: Random change sets

    static let schema = JournalWorkload.schema

    static func randomValue(_ random: inout SeededRandom) -> Value {
        func pick<T>(_ xs: [T]) -> T { xs[Int(random.next() % UInt64(xs.count))] }
        switch random.next() % 14 {
        case 0: return .null
        case 1: return .bool(random.next() & 1 == 0)
        case 2: return .int(pick([0, 1, -1, 63, -64, 64, -65, .max, .min, Int64(Int32.min), Int64(Int16.max)]))
        case 3: return .int(Int64(bitPattern: random.next()) >> (random.next() % 64))
        case 4:
            return .double(pick([0.0, -0.0, .nan, -.nan, .infinity, -.infinity, Double(bitPattern: 1), .pi, -12.5]))
        case 5: return .double(Double(bitPattern: random.next()))
        case 6: return .double(Double(Float(bitPattern: UInt32(truncatingIfNeeded: random.next()))))
        case 7:
            let pieces = ["", "a", "naïve", "✓", "日本語", "🧪👩‍👩‍👧", "\u{0}", "x y", "0123456789abcdef"]
            return .string((0..<Int(random.next() % 5)).map { _ in pick(pieces) }.joined())
        case 8:
            return .date(Date(timeIntervalSinceReferenceDate: pick([0, -1e9, 12345.678901, .nan, 7e8])))
        case 9: return .data(Data((0..<Int(random.next() % 40)).map { _ in UInt8(truncatingIfNeeded: random.next()) }))
        case 10:
            var u: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &u) { raw in
                for i in raw.indices { raw[i] = UInt8(truncatingIfNeeded: random.next()) }
            }
            return .uuid(UUID(uuid: u))
        case 11: return .url(pick([URL(string: "https://example.com/a%20b?q=1#f")!, URL(fileURLWithPath: "/tmp/ü b")]))
        case 12: return .decimal(pick([Decimal(string: "-123.4500")!, Decimal(string: "1e-20")!, Decimal(0)]))
        default: return .decimal(.nan)
        }
    }

    static func randomID(_ random: inout SeededRandom) -> ObjectID {
        let serial = random.next() & 1 == 0 ? random.next() % 300 + 1 : random.next() >> (random.next() % 64)
        return ObjectID(entity: UInt32(random.next() % UInt64(schema.layouts.count)), serial: serial)
    }

    static func randomChangeSet(_ random: inout SeededRandom, size: Int) -> ChangeSet {
        func count() -> Int { Int(random.next() % UInt64(size + 1)) }
        var changes = ChangeSet()
        for _ in 0..<count() {
            let values = (0..<Int(random.next() % 12)).map { _ in randomValue(&random) }
            changes.inserts.append(.init(id: randomID(&random), values: values))
        }
        for _ in 0..<count() {
            // Drawn in the order the pinned digests (FormatBytesTests) were recorded with: the changes, then the ID.
            let drawn = (0..<Int(random.next() % 4)).map { _ in
                (index: Int(random.next() % 20), old: randomValue(&random), new: randomValue(&random))
            }
            let id = randomID(&random)
            let c = drawn.map {
                ChangeSet.AttributeChange(
                    attribute: AttributeKey(entity: id.entity, index: $0.index), old: $0.old, new: $0.new)
            }
            changes.updates.append(.init(id: id, changes: c))
        }
        for _ in 0..<count() {
            let source = randomID(&random)
            changes.edits.append(
                .init(
                    random.next() & 1 == 0 ? .link : .unlink, source: source, relationship: Int(random.next() % 3),
                    target: randomID(&random)))
        }
        for _ in 0..<count() {
            let id = randomID(&random)
            let values = (0..<Int(random.next() % 12)).map { _ in randomValue(&random) }
            let links = schema.layouts[Int(id.entity)].relationships.map { rel in
                (0..<Int(random.next() % 4)).map { _ in
                    ObjectID(entity: rel.target, serial: random.next() >> (random.next() % 64))
                }
            }
            changes.deletes.append(.init(id: id, values: values, relationships: links))
        }
        return changes
    }

    /// Equality that also holds for NaN doubles and dates (`Value.isIdentical`).
    static func identical(_ a: ChangeSet, _ b: ChangeSet) -> Bool {
        func same(_ x: [Value], _ y: [Value]) -> Bool {
            x.count == y.count && zip(x, y).allSatisfy { $0.isIdentical(to: $1) }
        }
        return a.inserts.count == b.inserts.count && a.updates.count == b.updates.count && a.edits == b.edits
            && a.deletes.count == b.deletes.count
            && zip(a.inserts, b.inserts).allSatisfy { $0.id == $1.id && same($0.values, $1.values) }
            && zip(a.updates, b.updates).allSatisfy { u, v in
                u.id == v.id
                    && same(u.changes.map(\.old), v.changes.map(\.old))
                    && same(u.changes.map(\.new), v.changes.map(\.new))
                    && u.changes.map(\.attribute) == v.changes.map(\.attribute)
            }
            && zip(a.deletes, b.deletes).allSatisfy {
                $0.id == $1.id && same($0.values, $1.values) && $0.relationships == $1.relationships
            }
    }

    // MARK: Reference codec: the plain encoding, value by value and byte by byte

    static func referenceEncode(_ changes: ChangeSet) -> [UInt8] {
        ByteWriter.bytes { w in
            w.varint(changes.inserts.count)
            for insert in changes.inserts {
                w.varint(UInt64(insert.id.entity))
                w.varint(insert.id.serial)
                w.varint(insert.values.count)
                for v in insert.values { w.value(v) }
            }
            w.varint(changes.updates.count)
            for update in changes.updates {
                w.varint(UInt64(update.id.entity))
                w.varint(update.id.serial)
                w.varint(update.changes.count)
                for change in update.changes {
                    w.varint(change.attribute.index)
                    w.value(change.old)
                    w.value(change.new)
                }
            }
            w.varint(changes.edits.count)
            for edit in changes.edits {
                w.u8(edit.kind.rawValue)
                w.varint(UInt64(edit.source.entity))
                w.varint(edit.source.serial)
                w.varint(edit.relationship.index)
                w.varint(UInt64(edit.target.entity))
                w.varint(edit.target.serial)
            }
            w.varint(changes.deletes.count)
            for delete in changes.deletes {
                w.varint(UInt64(delete.id.entity))
                w.varint(delete.id.serial)
                w.varint(delete.values.count)
                for v in delete.values { w.value(v) }
                w.varint(delete.relationships.count)
                for targets in delete.relationships {
                    w.varint(targets.count)
                    for t in targets { w.varint(t.serial) }
                }
            }
        }
    }

    static func referenceDecode(_ bytes: [UInt8], context: String) throws -> ChangeSet {
        var r = ByteReader(bytes, context: context)
        var changes = ChangeSet()
        func entity() throws -> UInt32 { UInt32(try r.int(limit: schema.layouts.count - 1)) }
        func values() throws -> [Value] { try (0..<(try r.count())).map { _ in try r.value() } }
        for _ in 0..<(try r.count(minimumBytes: 3)) {
            let id = ObjectID(entity: try entity(), serial: try r.varint())
            changes.inserts.append(.init(id: id, values: try values()))
        }
        for _ in 0..<(try r.count(minimumBytes: 3)) {
            let id = ObjectID(entity: try entity(), serial: try r.varint())
            var update = ChangeSet.Update(id: id, changes: [])
            for _ in 0..<(try r.count(minimumBytes: 3)) {
                let attribute = try r.int(limit: Int(UInt32.max))
                update.changes.append(
                    .init(
                        attribute: AttributeKey(entity: id.entity, index: attribute), old: try r.value(),
                        new: try r.value()))
            }
            changes.updates.append(update)
        }
        for _ in 0..<(try r.count(minimumBytes: 6)) {
            let rawKind = try r.u8()
            guard let kind = ChangeSet.RelationshipEdit.Kind(rawValue: rawKind) else {
                throw r.failure("unknown edit kind \(rawKind)")
            }
            let source = ObjectID(entity: try entity(), serial: try r.varint())
            let relationship = try r.int(limit: Int(UInt32.max))
            let target = ObjectID(entity: try entity(), serial: try r.varint())
            changes.edits.append(.init(kind, source: source, relationship: relationship, target: target))
        }
        for _ in 0..<(try r.count(minimumBytes: 4)) {
            let id = ObjectID(entity: try entity(), serial: try r.varint())
            let vs = try values()
            let relationships = schema.layouts[Int(id.entity)].relationships
            let k = try r.count()
            guard k == relationships.count else {
                throw r.failure(
                    "delete of \(schema.describe(id)) lists \(k) relationships; its entity has \(relationships.count)")
            }
            var links: [[ObjectID]] = []
            for rel in relationships {
                links.append(
                    try (0..<(try r.count())).map { _ in ObjectID(entity: rel.target, serial: try r.varint()) })
            }
            changes.deletes.append(.init(id: id, values: vs, relationships: links))
        }
        guard r.isAtEnd else { throw r.failure("\(r.remaining) unexpected trailing bytes") }
        return changes
    }
}

import Foundation
import TrellisCore
import TrellisGraph

/// The binary form of a `ChangeSet`: the payload of a journal record before compression.
///
/// Layout (every count and number a LEB128 varint unless noted; values as `ByteWriter.value` writes them):
///
///     inserts:  count, then per insert:  entity, serial, value count, values…
///     updates:  count, then per update:  entity, serial, change count, then per change: attribute, old, new
///     edits:    count, then per edit:    kind (1 link, 2 unlink, 3 place), source entity, source serial,
///                                        relationship, target entity, target serial; a place (format version 8)
///                                        then: position, previous position + 1 (0: was not in the list)
///     deletes:  count, then per delete:  entity, serial, value count, values…,
///                                        relationship count, then per relationship: target count, target serials…
///                                        (target entity from the schema)
///
/// Positions, not names, identify attributes and relationships: the schema stored in the segment header says what
/// they mean. Old values ride along so history and undo can read a record without the graph it applied to.
package enum ChangeSetCodec {
    /// The bytes of one piece of an encoded payload (`ByteWriter.pieces`): no buffer of a big record holds more.
    static let pieceBytes = JournalFormat.defaultFragmentBytes

    /// The payload of `changes`, as pieces that follow one another (a big record is never one buffer: see
    /// `ByteWriter.pieces`). `ahead` may hold sections encoded already (as background work, while the commit
    /// applied the same changes): `ahead.inserts` must be `encodeInserts(changes.inserts)`, `ahead.updates`
    /// `encodeUpdates(changes.updates)` and `ahead.editsAndDeletes` `encodeEditsAndDeletes(changes.edits,
    /// changes.deletes)`; they are taken as they are instead of encoded again.
    static func encodePieces(
        _ changes: ChangeSet, schema: Schema, ahead: consuming EncodedSections = EncodedSections()
    ) -> [[UInt8]] {
        var rest = ahead
        if rest.inserts == nil && rest.updates == nil && rest.editsAndDeletes == nil {
            // Nothing encoded ahead (most commits): one writer for every section, with room for a short author.
            let estimate = estimatedSize(changes, inserts: true, updates: true) + Self.authorRoom
            return ByteWriter.pieces(estimate: estimate, pieceBytes: pieceBytes) { w in
                encodeInserts(changes.inserts, into: &w)
                encodeUpdates(changes.updates, into: &w)
                encodeEditsAndDeletes(changes.edits, changes.deletes, into: &w)
            }
        }
        let inserts = rest.inserts.take() ?? encodeInserts(changes.inserts)
        let updates = rest.updates.take() ?? encodeUpdates(changes.updates)
        let editsAndDeletes = rest.editsAndDeletes.take() ?? encodeEditsAndDeletes(changes.edits, changes.deletes)
        var pieces = inserts
        for piece in updates + editsAndDeletes where !piece.isEmpty {
            // A small section goes into the last piece in place (sections are made with room to spare after them,
            // see `tailRoom`), so a small record stays one buffer.
            if let last = pieces.indices.last, pieces[last].count + piece.count <= pieceBytes {
                pieces[last] += piece
            } else {
                pieces.append(piece)
            }
        }
        return pieces
    }

    /// `encodePieces` joined into one buffer: for a record that is one blob inside another (a migration's change
    /// set), and for tests.
    static func encode(
        _ changes: ChangeSet, schema: Schema, ahead: consuming EncodedSections = EncodedSections()
    ) -> [UInt8] {
        let pieces = encodePieces(changes, schema: schema, ahead: ahead)
        return pieces.count == 1 ? pieces[0] : Array(pieces.joined())
    }

    /// The payload's first section, the inserts: the same bytes `encode` writes for them.
    package static func encodeInserts(_ inserts: [ChangeSet.Insert]) -> [[UInt8]] {
        var changes = ChangeSet()
        changes.inserts = inserts
        let estimate = estimatedSize(changes, inserts: true, updates: false) + Self.tailRoom
        return ByteWriter.pieces(estimate: estimate, pieceBytes: pieceBytes) { w in encodeInserts(inserts, into: &w) }
    }

    /// Spare bytes after a section, so that the small sections after it (and the author) go in place.
    static let tailRoom = 4096

    /// Spare bytes after a whole payload, for a short author (a longer one grows the buffer once): a small commit's
    /// payload stays within the sizes glibc caches per thread.
    static let authorRoom = 64

    /// The payload's second section, the updates: the same bytes `encode` writes for them.
    package static func encodeUpdates(_ updates: [ChangeSet.Update]) -> [[UInt8]] {
        var changes = ChangeSet()
        changes.updates = updates
        let estimate = estimatedSize(changes, inserts: false, updates: true) + Self.tailRoom
        return ByteWriter.pieces(estimate: estimate, pieceBytes: pieceBytes) { w in encodeUpdates(updates, into: &w) }
    }

    private static func encodeInserts(_ inserts: [ChangeSet.Insert], into w: inout ByteWriter) {
        w.varint(inserts.count)
        for insert in inserts {
            w.varint(UInt64(insert.id.entity))
            w.varint(insert.id.serial)
            w.varint(insert.values.count)
            for v in insert.values { w.value(v) }
        }
    }

    private static func encodeUpdates(_ updates: [ChangeSet.Update], into w: inout ByteWriter) {
        w.varint(updates.count)
        for update in updates {
            w.varint(UInt64(update.id.entity))
            w.varint(update.id.serial)
            w.varint(update.changes.count)
            for change in update.changes {
                w.varint(change.attribute.index)
                w.value(change.old)
                w.value(change.new)
            }
        }
    }

    /// The sections after the updates.
    /// The payload's last sections, the edits and the deletes: the same bytes `encode` writes for them.
    package static func encodeEditsAndDeletes(
        _ edits: [ChangeSet.RelationshipEdit], _ deletes: [ChangeSet.Delete]
    ) -> [[UInt8]] {
        ByteWriter.pieces(estimate: 64 + edits.count * 16 + deletes.count * 64, pieceBytes: pieceBytes) { w in
            encodeEditsAndDeletes(edits, deletes, into: &w)
        }
    }

    private static func encodeEditsAndDeletes(
        _ edits: [ChangeSet.RelationshipEdit], _ deletes: [ChangeSet.Delete], into w: inout ByteWriter
    ) {
        w.varint(edits.count)
        for edit in edits {
            w.u8(edit.kind.rawValue)
            w.varint(UInt64(edit.source.entity))
            w.varint(edit.source.serial)
            w.varint(edit.relationship.index)
            w.varint(UInt64(edit.target.entity))
            w.varint(edit.target.serial)
            if edit.kind == .place {
                w.varint(edit.position)
                w.varint(edit.previousPosition.map { $0 + 1 } ?? 0)
            }
        }
        w.varint(deletes.count)
        // Read in place through the buffers: iterating by value copied each delete's arrays (a retain and a release
        // for each, for every deleted object).
        deletes.withUnsafeBufferPointer { deletes in
            for k in deletes.indices {
                w.varint(UInt64(deletes[k].id.entity))
                w.varint(deletes[k].id.serial)
                let (values, relationships): ([Value], [[ObjectID]])
                switch deletes[k].record {
                case .row(let row):
                    encode(row, into: &w)
                    continue
                case .given(let v, let r):
                    (values, relationships) = (v, r)
                }
                w.varint(values.count)
                values.withUnsafeBufferPointer { values in
                    for v in values.indices { w.value(values[v]) }
                }
                w.varint(relationships.count)
                relationships.withUnsafeBufferPointer { relationships in
                    for r in relationships.indices {
                        w.varint(relationships[r].count)
                        relationships[r].withUnsafeBufferPointer { targets in
                            for t in targets { w.varint(t.serial) }
                        }
                    }
                }
            }
        }
    }

    /// A deleted row's values and targets, read from its leaf: the same bytes as its `values` and `relationships`
    /// would encode to, without building them (or a `String` for each text value).
    private static func encode(_ deleted: DeletedRow, into w: inout ByteWriter) {
        let r = deleted.row
        let bit: UInt64 = 1 << UInt64(r)
        deleted.leaf.columns.withUnsafeBufferPointer { columns in
            w.varint(columns.count)
            for c in columns.indices {
                guard columns[c].nulls & bit == 0 else {
                    w.value(.null)
                    continue
                }
                switch columns[c].kind {
                case .string:
                    w.u8(ValueTag.string.rawValue)
                    let span = columns[c].strings.span(r)
                    columns[c].strings.bytes.withUnsafeBytes { w.blob(UnsafeRawBufferPointer(rebasing: $0[span])) }
                default:
                    w.value(columns[c].value(r))
                }
            }
        }
        w.varint(deleted.links.count)
        for k in deleted.links.indices {
            w.varint(deleted.leaf.targetCount(r, k))
            deleted.leaf.forEachTarget(r, k) { w.varint($0) }
        }
    }

    /// A guess at the encoded size, so that the writer rarely grows: the first insert's values (and the first
    /// update's changes) stand for the rest, with a quarter more for variation.
    private static func estimatedSize(_ changes: ChangeSet, inserts: Bool, updates: Bool) -> Int {
        var size = 64 + changes.edits.count * 16 + changes.deletes.count * 64
        if inserts, let first = changes.inserts.first {
            size += changes.inserts.count * (8 + first.values.reduce(0) { $0 + estimatedSize($1) })
        }
        if updates, let first = changes.updates.first {
            let perChange = first.changes.reduce(0) { $0 + 2 + estimatedSize($1.old) + estimatedSize($1.new) }
            size += changes.updates.count * (8 + perChange)
        }
        return size + size / 4
    }

    private static func estimatedSize(_ value: Value) -> Int {
        switch value {
        case .null, .bool: return 1
        case .int: return 5
        case .double, .date: return 9
        case .string(let s): return 2 + s.utf8.count
        case .data(let d): return 2 + d.count
        case .uuid: return 17
        case .url, .decimal: return 32
        case .list(let elements): return 2 + elements.reduce(0) { $0 + estimatedSize($1) }
        }
    }

    /// The first format version whose change-set records (type 1) end with the commit's author.
    static let authorVersion: UInt16 = 7

    /// Appends the record's last field (format version 7): u8 1 for no author, or u8 2 and the author as a string. Never
    /// 0 for none, so that a record ends in a non-zero byte (unless its author is empty), which tells a rotted whole
    /// record from a torn one (journal-format.md, Recovery step 4).
    /// Returns the bytes appended, which a writer appending to an older segment drops again (`withoutAuthor`).
    @discardableResult
    package static func appendAuthor(_ author: String?, to payload: inout [UInt8]) -> Int {
        var pieces = [payload]
        payload = []
        let count = appendAuthor(author, to: &pieces)
        payload = pieces[0]
        return count
    }

    /// `appendAuthor(_:to:)` for a payload of pieces: the author goes at the end of the last one.
    @discardableResult
    package static func appendAuthor(_ author: String?, to payload: inout [[UInt8]]) -> Int {
        if payload.isEmpty { payload.append([]) }
        // No author (most commits): one byte appended in place, without building a trailer first.
        guard let author else {
            payload[payload.count - 1].append(1)
            return 1
        }
        let trailer = ByteWriter.bytes(estimate: 16 + author.utf8.count) { w in
            w.u8(2)
            w.string(author)
        }
        payload[payload.count - 1] += trailer
        return trailer.count
    }

    /// Decodes a payload; the schema names the target entity of each deleted object's relationships. Throws
    /// `TrellisError.corrupt` for anything that does not parse or does not fit the schema's shape.
    static func decode(_ bytes: [UInt8], schema: Schema, context: String) throws(TrellisError) -> ChangeSet {
        try decodeRecord(bytes, schema: schema, context: context, version: 1).changes
    }

    /// Decodes the payload of a change-set record of a file of format `version`: from version 7 it ends with the
    /// commit's author (`appendAuthor`), before it with the deletes. Embedded change sets (a migration record's)
    /// never carry an author: decode them with `decode`.
    ///
    /// `inserts`, when given, reads the inserts section in place of the decoder (recovery writes them straight into
    /// a graph's leaves, `ColumnarInserts`), which leaves the returned change set's inserts empty.
    static func decodeRecord(
        _ bytes: [UInt8], schema: Schema, context: String, version: UInt16,
        inserts decodeInserts: ((inout ByteReader) throws(TrellisError) -> Void)? = nil
    ) throws(TrellisError) -> (changes: ChangeSet, author: String?) {
        var r = ByteReader(bytes, context: context)
        var changes = ChangeSet()
        let entityCount = schema.layouts.count
        func entity() throws(TrellisError) -> UInt32 { UInt32(try r.int(limit: entityCount - 1)) }

        // A count read is checked against the bytes left (`ByteReader.count`), and nothing is reserved beyond what
        // the schema allows (a mismatch is found when the change set applies): an inflated payload makes a count of
        // millions cost a few bytes on disk.
        func reserve(_ n: Int) -> Int { min(n, 1 << 12) }
        // A collection's elements must be of its attribute's element type (a set's and a dictionary's ascending),
        // which the column, knowing only the kind, cannot check when the change set applies.
        func value(_ id: ObjectID, _ attribute: Int) throws(TrellisError) -> Value {
            let v = try r.value()
            guard case .list = v else { return v }
            let attributes = schema.layouts[Int(id.entity)].attributes
            guard attribute < attributes.count, attributes[attribute].type.normalized(v)?.isIdentical(to: v) == true
            else {
                throw r.failure(
                    "a \(v) for \(attribute < attributes.count ? "\(attributes[attribute].type)" : "no") attribute")
            }
            return v
        }
        func values(of id: ObjectID, _ what: String) throws(TrellisError) -> [Value] {
            let n = try r.count()
            var values: [Value] = []
            values.reserveCapacity(min(n, schema.layouts[Int(id.entity)].attributes.count))
            for a in 0..<n { values.append(try value(id, a)) }
            return values
        }

        if let decodeInserts {
            try decodeInserts(&r)
        } else {
            let inserts = try r.count(minimumBytes: 3)
            changes.inserts.reserveCapacity(reserve(inserts))
            for _ in 0..<inserts {
                let id = ObjectID(entity: try entity(), serial: try r.varint())
                changes.inserts.append(.init(id: id, values: try values(of: id, "insert")))
            }
        }
        let updates = try r.count(minimumBytes: 3)
        changes.updates.reserveCapacity(reserve(updates))
        for _ in 0..<updates {
            let id = ObjectID(entity: try entity(), serial: try r.varint())
            let n = try r.count(minimumBytes: 3)
            var update = ChangeSet.Update(id: id, changes: [])
            update.changes.reserveCapacity(min(n, schema.layouts[Int(id.entity)].attributes.count))
            for _ in 0..<n {
                let attribute = try r.int(limit: Int(UInt32.max))
                update.changes.append(
                    .init(
                        attribute: AttributeKey(entity: id.entity, index: attribute), old: try value(id, attribute),
                        new: try value(id, attribute)))
            }
            changes.updates.append(update)
        }
        let edits = try r.count(minimumBytes: 6)
        changes.edits.reserveCapacity(reserve(edits))
        for _ in 0..<edits {
            let rawKind = try r.u8()
            guard let kind = ChangeSet.RelationshipEdit.Kind(rawValue: rawKind) else {
                throw r.failure("unknown edit kind \(rawKind)")
            }
            let source = ObjectID(entity: try entity(), serial: try r.varint())
            let relationship = try r.int(limit: Int(UInt32.max))
            let target = ObjectID(entity: try entity(), serial: try r.varint())
            var edit = ChangeSet.RelationshipEdit(kind, source: source, relationship: relationship, target: target)
            if kind == .place {
                edit.position = try r.int(limit: Int(Int32.max))
                let previous = try r.int(limit: Int(Int32.max))
                edit.previousPosition = previous == 0 ? nil : previous - 1
            }
            changes.edits.append(edit)
        }
        let deletes = try r.count(minimumBytes: 4)
        changes.deletes.reserveCapacity(reserve(deletes))
        for _ in 0..<deletes {
            let id = ObjectID(entity: try entity(), serial: try r.varint())
            let values = try values(of: id, "delete")
            let relationships = schema.layouts[Int(id.entity)].relationships
            let k = try r.count()
            guard k == relationships.count else {
                throw r.failure(
                    "delete of \(schema.describe(id)) lists \(k) relationships; its entity has \(relationships.count)")
            }
            var links: [[ObjectID]] = []
            links.reserveCapacity(k)
            for rel in relationships {
                let m = try r.count()
                var targets: [ObjectID] = []
                targets.reserveCapacity(rel.isToMany ? reserve(m) : min(m, 1))
                for _ in 0..<m { targets.append(ObjectID(entity: rel.target, serial: try r.varint())) }
                links.append(targets)
            }
            changes.deletes.append(.init(id: id, values: values, relationships: links))
        }
        var author: String?
        if version >= authorVersion {
            let flag = try r.u8()
            switch flag {
            case 1: break
            case 2: author = try r.string()
            default: throw r.failure("author flag \(flag) (1 or 2 expected)")
            }
        }
        guard r.isAtEnd else { throw r.failure("\(r.remaining) unexpected trailing bytes") }
        return (changes, author)
    }
}

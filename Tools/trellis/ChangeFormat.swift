import Foundation
import Trellis

/// Change records in words: the table rows of `dump` and `history`, and their JSON. Attributes and relationships
/// are named from the schema a record was written with (`JournalRecord.schema`), so no app code is needed to read
/// them, and records from before a migration keep their names.
struct ChangeFormat {
    let schema: Schema

    func object(_ id: ObjectID) -> String { ObjectName.text(id, schema) }

    func attributeName(_ entity: UInt32, _ index: Int) -> String {
        guard let e = entityDescription(entity), index < e.attributes.count else { return "attribute\(index)" }
        return e.attributes[index].name
    }

    func relationshipName(_ entity: UInt32, _ index: Int) -> String {
        guard let e = entityDescription(entity), index < e.relationships.count else { return "relationship\(index)" }
        return e.relationships[index].name
    }

    /// The name of the relationship at the other end of an edit (how the target sees the link).
    func inverseName(_ edit: ChangeSet.RelationshipEdit) -> String {
        guard let e = entityDescription(edit.source.entity), edit.relationship.index < e.relationships.count else {
            return "inverse"
        }
        return e.relationships[edit.relationship.index].inverse
    }

    private func entityDescription(_ n: UInt32) -> EntityDescription? {
        Int(n) < schema.entities.count ? schema.entities[Int(n)] : nil
    }

    /// `#12  2026-…Z  segment-….trj@4096  212 B stored, 530 B raw` (and `, in 3 frames` for a record of several,
    /// format version 10)
    func heading(_ record: JournalRecord) -> String {
        var raw = record.isCompressed ? ", \(ValueFormat.bytes(record.uncompressedBytes)) raw" : ", not compressed"
        if record.frames > 1 { raw += ", in \(record.frames) frames" }
        let author = record.author.map { "  by \(ValueFormat.text(.string($0)))" } ?? ""
        return "#\(record.sequence)  \(ValueFormat.timestamp(record.time))  \(record.file)@\(record.offset)  "
            + "\(ValueFormat.bytes(record.storedBytes)) stored\(raw)\(author)"
    }

    /// One table row per change: operation, object, details.
    func rows(_ changes: ChangeSet) -> [String] {
        var out: [String] = []
        func row(_ op: String, _ id: ObjectID, _ detail: String) {
            let name = object(id)
            let padded = name.count < 14 ? name.padding(toLength: 14, withPad: " ", startingAt: 0) : name
            out.append("    " + op.padding(toLength: 8, withPad: " ", startingAt: 0) + padded + " " + detail)
        }
        for i in changes.inserts { row("insert", i.id, values(i.id.entity, i.values)) }
        for u in changes.updates {
            let detail = u.changes.map {
                "\(attributeName(u.id.entity, $0.attribute.index)): \(ValueFormat.text($0.old)) → \(ValueFormat.text($0.new))"
            }
            row("update", u.id, detail.joined(separator: ", "))
        }
        for e in changes.edits {
            row(
                Self.kindName(e.kind), e.source,
                "\(relationshipName(e.source.entity, e.relationship.index)) → \(object(e.target))"
                    + Self.placeText(e))
        }
        for d in changes.deletes {
            var detail = values(d.id.entity, d.values)
            let links = relationships(d.id.entity, d.relationships).map {
                "\($0.0) → [\($0.1.map(object).joined(separator: ", "))]"
            }
            if !links.isEmpty { detail += "; " + links.joined(separator: "; ") }
            row("delete", d.id, detail)
        }
        return out
    }

    func values(_ entity: UInt32, _ values: [Value]) -> String {
        values.enumerated().map { "\(attributeName(entity, $0))=\(ValueFormat.text($1))" }.joined(separator: ", ")
    }

    /// The non-empty relationships of a deleted object, by name.
    func relationships(_ entity: UInt32, _ targets: [[ObjectID]]) -> [(String, [ObjectID])] {
        targets.enumerated().filter { !$1.isEmpty }.map { (relationshipName(entity, $0), $1) }
    }

    /// A live object's relationships by name, each with its targets, in schema order.
    func links(_ row: Row) -> [(String, [ObjectID])] {
        guard Int(row.id.entity) < schema.layouts.count else { return [] }
        return schema.layouts[Int(row.id.entity)].relationships.enumerated().map { k, r in
            let key = RelationshipKey(entity: row.id.entity, index: k)
            return (r.name, row.targetSerials(key).map { ObjectID(entity: r.target, serial: $0) })
        }
    }

    /// A live object as `export` and `find` write it: `{"id", "values", "relationships": {name: [IDs]}}`.
    func objectJSON(_ row: Row) -> JSON {
        .object([
            ("id", .string(object(row.id))), ("values", valuesJSON(row.id.entity, row.values)),
            ("relationships", .object(links(row).map { ($0.0, .array($0.1.map { .string(object($0)) })) })),
        ])
    }

    func valuesJSON(_ entity: UInt32, _ values: [Value]) -> JSON {
        .object(values.enumerated().map { (attributeName(entity, $0), ValueFormat.json($1)) })
    }

    func json(_ record: JournalRecord, _ changes: ChangeSet) -> JSON {
        .object([
            ("sequence", .int(record.sequence)),
            ("time", .string(ValueFormat.timestamp(record.time))),
            ("author", record.author.map { .string($0) } ?? .null),
            ("file", .string(record.file)),
            ("offset", .int(record.offset)),
            ("storedBytes", .int(record.storedBytes)),
            ("uncompressedBytes", .int(record.uncompressedBytes)),
            ("compressed", .bool(record.isCompressed)),
            ("inserts", .array(changes.inserts.map { insertJSON($0) })),
            ("updates", .array(changes.updates.map { updateJSON($0) })),
            ("links", .array(changes.edits.map { editJSON($0) })),
            ("deletes", .array(changes.deletes.map { deleteJSON($0) })),
            ("migration", record.migration.map { MigrationFormat.json($0.summary) } ?? .null),
        ])
    }

    func insertJSON(_ i: ChangeSet.Insert) -> JSON {
        .object([("object", .string(object(i.id))), ("values", valuesJSON(i.id.entity, i.values))])
    }

    func updateJSON(_ u: ChangeSet.Update) -> JSON {
        .object([
            ("object", .string(object(u.id))),
            (
                "changes",
                .array(
                    u.changes.map { c in
                        .object([
                            ("attribute", .string(attributeName(u.id.entity, c.attribute.index))),
                            ("old", ValueFormat.json(c.old)), ("new", ValueFormat.json(c.new)),
                        ])
                    })
            ),
        ])
    }

    func editJSON(_ e: ChangeSet.RelationshipEdit) -> JSON {
        var pairs: [(String, JSON)] = [
            ("kind", .string(Self.kindName(e.kind))), ("source", .string(object(e.source))),
            ("relationship", .string(relationshipName(e.source.entity, e.relationship.index))),
            ("target", .string(object(e.target))),
        ]
        if e.kind == .place {
            pairs.append(("position", .int(Int64(e.position))))
            pairs.append(("previousPosition", e.previousPosition.map { .int(Int64($0)) } ?? .null))
        }
        return .object(pairs)
    }

    /// "link", "unlink" or "place".
    static func kindName(_ kind: ChangeSet.RelationshipEdit.Kind) -> String {
        switch kind {
        case .link: "link"
        case .unlink: "unlink"
        case .place: "place"
        }
    }

    /// For a place edit, " at P" and, for a move, " (from Q)"; empty for other edits.
    static func placeText(_ e: ChangeSet.RelationshipEdit) -> String {
        guard e.kind == .place else { return "" }
        return " at \(e.position)" + (e.previousPosition.map { " (from \($0))" } ?? "")
    }

    func deleteJSON(_ d: ChangeSet.Delete) -> JSON {
        .object([
            ("object", .string(object(d.id))), ("values", valuesJSON(d.id.entity, d.values)),
            (
                "relationships",
                .object(
                    relationships(d.id.entity, d.relationships).map { ($0.0, .array($0.1.map { .string(object($0)) })) }
                )
            ),
        ])
    }
}

/// Which changes of a record a command shows: all, those of one entity, or those touching one object.
struct ChangeFilter {
    var entity: UInt32?
    var object: ObjectID?
    /// The filter names an entity or object that the record's schema does not have: nothing matches.
    var matchesNothing = false

    /// A filter in one schema: `entity` or `object` is nil when that argument was not given, `.some(nil)` when it
    /// was and names nothing in this schema.
    init(entity: UInt32??, object: ObjectID??) {
        self.entity = entity ?? nil
        self.object = object ?? nil
        matchesNothing = entity == .some(nil) || object == .some(nil)
    }

    var isActive: Bool { entity != nil || object != nil || matchesNothing }

    func matches(_ id: ObjectID) -> Bool {
        if matchesNothing { return false }
        if let object, id != object { return false }
        if let entity, id.entity != entity { return false }
        return true
    }

    /// The part of `changes` that concerns the filter; a link counts when either end matches.
    func apply(_ changes: ChangeSet) -> ChangeSet {
        guard isActive else { return changes }
        return ChangeSet(
            inserts: changes.inserts.filter { matches($0.id) }, updates: changes.updates.filter { matches($0.id) },
            edits: changes.edits.filter { matches($0.source) || matches($0.target) },
            deletes: changes.deletes.filter { matches($0.id) })
    }
}

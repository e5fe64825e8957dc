import Foundation
import Trellis

/// `trellis history STORE OBJECT-ID`: every change of one object the journal holds.
struct HistoryCommand: Command {
    static let name = "history"
    static let summary = "every change of one object across the journal"
    static let help = """
        usage: trellis history STORE OBJECT-ID [--json]

        Prints every change of one object (written Entity#serial, e.g. Item#42) that the journal holds, oldest
        first, each with the author its commit was saved by (when it has one): its insert with every value, each update (old → new), each link and unlink seen from the object's
        side (a link made from the other end shows under this object's inverse relationship), and its delete.
        Changes older than the store's checkpoint were compacted away; the object's state in the checkpoint is
        shown instead. Each change is named in the schema it was written with; a schema migration shows as one
        entry (fingerprints and versions, its steps, and the object's ID before and after when the migration
        renumbered its entity). OBJECT-ID is read in the newest schema that has its entity and followed back
        through the migrations.

        options:
          --json    one JSON object: {"store", "object", "checkpointSequence", "atCheckpoint", "changes"} (README.md)
        """

    var options: CommonOptions
    var object: String

    init(parsing arguments: inout Arguments) throws {
        options = try CommonOptions(parsing: &arguments)
        object = try arguments.positional("OBJECT-ID")
    }

    /// One change of the object, as the object sees it.
    struct Entry {
        var record: JournalRecord
        var kind: String
        var text: String
        var json: [(String, JSON)]
    }

    func run(_ console: Console) throws -> ExitCode {
        let location = try StoreLocation(options.store)
        let reader = location.reader
        let epochs = SchemaEpochs(reader, newest: try reader.schema())
        // The object in each span of the journal between migrations: a migration can renumber its entity.
        let ids = try epochs.ids(object)
        guard let newestSpan = ids.lastIndex(where: { $0 != nil }), let newestID = ids[newestSpan] else {
            throw UsageError("'\(object)' names no object")
        }
        let name = ObjectName.text(newestID, epochs.schemas[newestSpan])
        let checkpointSequence = (try? reader.manifest().checkpointSequence) ?? 0
        // The checkpoint is older than every migration the journal holds: the object has its first span's ID there.
        let checkpoint = checkpointSequence > 0 ? try? reader.checkpointSnapshot() : nil
        let atCheckpoint = ids[0].flatMap { id in checkpoint.flatMap { $0.row(id).map { (id, $0) } } }
        let checkpointFormat = checkpoint.map { ChangeFormat(schema: $0.schema) }
        var entries: [Entry] = []
        let problems = try reader.forEachRecord { record in
            let span = epochs.span(of: record.sequence)
            if let migration = record.migration {
                if let entry = Self.migrationEntry(
                    record, migration, before: span > 0 ? ids[span - 1] : nil, after: ids[span])
                {
                    entries.append(entry)
                }
            } else if let id = ids[span] {
                entries += Self.entries(of: id, in: record, ChangeFormat(schema: record.schema))
            }
        }
        // An ID no checkpoint holds and no record touches names an object this store never had.
        let existed = atCheckpoint != nil || entries.contains { $0.kind != "migration" }
        if options.json {
            let doc = JSON.object([
                ("store", .string(location.url.path)), ("object", .string(name)), ("existed", .bool(existed)),
                ("checkpointSequence", .int(checkpointSequence)),
                (
                    "atCheckpoint",
                    atCheckpoint.flatMap { id, row in checkpointFormat?.valuesJSON(id.entity, row) } ?? .null
                ),
                (
                    "changes",
                    .array(
                        entries.map { e in
                            .object(
                                [
                                    ("sequence", .int(e.record.sequence)),
                                    ("time", .string(ValueFormat.timestamp(e.record.time))),
                                    ("author", e.record.author.map { .string($0) } ?? .null), ("kind", .string(e.kind)),
                                ] + e.json)
                        })
                ),
                ("problems", .array(problems.map(problemJSON))),
            ])
            console.line(doc.rendered())
        } else {
            console.line("history of \(name) in \(location.url.path)")
            if checkpointSequence > 0 {
                let state =
                    atCheckpoint.flatMap { id, row in checkpointFormat?.values(id.entity, row) }
                    ?? "not in the checkpoint"
                console.line("  at checkpoint (sequence \(checkpointSequence)): \(state)")
            }
            for e in entries {
                let author = e.record.author.map { "  by \(ValueFormat.text(.string($0)))" } ?? ""
                console.line(
                    "  #\(e.record.sequence)  \(ValueFormat.timestamp(e.record.time))\(author)  \(e.kind)  \(e.text)")
            }
            if entries.isEmpty { console.line("  no changes in the journal") }
            for p in problems { console.message("damage: \(p)") }
        }
        if !existed && problems.isEmpty {
            console.message("\(name) never existed in this store: no checkpoint holds it and no record touches it")
        }
        return problems.isEmpty && existed ? .ok : .failed
    }

    /// A schema migration, as the object sees it: the schemas before and after, its steps, and the object's ID on
    /// each side when the migration renumbered it. Nil when the object's entity is on neither side.
    static func migrationEntry(
        _ record: JournalRecord, _ migration: JournalMigration, before: ObjectID?, after: ObjectID?
    ) -> Entry? {
        guard before != nil || after != nil else { return nil }
        let m = migration.summary
        let old = before.map { ObjectName.text($0, migration.schemaBefore) }
        let new = after.map { ObjectName.text($0, migration.schemaAfter) }
        var text = "schema \(MigrationFormat.change(m))"
        if old != new { text += "; \(old ?? "(none)") is now \(new ?? "gone (its entity was removed)")" }
        if !m.steps.isEmpty { text += ": " + m.steps.joined(separator: "; ") }
        guard case .object(let pairs) = MigrationFormat.json(m) else { return nil }
        let json =
            pairs.filter { !["sequence", "time"].contains($0.0) } + [
                ("objectBefore", old.map { .string($0) } ?? .null), ("objectAfter", new.map { .string($0) } ?? .null),
            ]
        return Entry(record: record, kind: "migration", text: text, json: json)
    }

    static func entries(of id: ObjectID, in record: JournalRecord, _ format: ChangeFormat) -> [Entry] {
        var out: [Entry] = []
        let changes = record.changes
        for i in changes.inserts where i.id == id {
            out.append(
                Entry(
                    record: record, kind: "insert", text: format.values(id.entity, i.values),
                    json: [("values", format.valuesJSON(id.entity, i.values))]))
        }
        for u in changes.updates where u.id == id {
            let text = u.changes.map {
                "\(format.attributeName(id.entity, $0.attribute.index)): \(ValueFormat.text($0.old)) → \(ValueFormat.text($0.new))"
            }
            let json = format.updateJSON(u)
            guard case .object(let pairs) = json else { continue }
            out.append(
                Entry(
                    record: record, kind: "update", text: text.joined(separator: ", "),
                    json: pairs.filter { $0.0 == "changes" }))
        }
        for e in changes.edits where e.source == id || e.target == id {
            let mine = e.source == id
            let relationship =
                mine ? format.relationshipName(e.source.entity, e.relationship.index) : format.inverseName(e)
            let other = mine ? e.target : e.source
            let kind = ChangeFormat.kindName(e.kind)
            out.append(
                Entry(
                    record: record, kind: kind,
                    text: "\(relationship) → \(format.object(other))" + (mine ? ChangeFormat.placeText(e) : ""),
                    json: [("relationship", .string(relationship)), ("target", .string(format.object(other)))]))
        }
        for d in changes.deletes where d.id == id {
            let json = format.deleteJSON(d)
            guard case .object(let pairs) = json else { continue }
            out.append(
                Entry(
                    record: record, kind: "delete", text: format.values(id.entity, d.values),
                    json: pairs.filter { $0.0 != "object" }))
        }
        return out
    }
}

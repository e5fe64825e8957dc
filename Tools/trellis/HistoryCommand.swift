import Foundation
import Trellis

/// `trellis history STORE OBJECT-ID`: every change of one object the journal holds.
struct HistoryCommand: Command {
    static let name = "history"
    static let summary = "every change of one object across the journal"
    static let help = """
        usage: trellis history STORE OBJECT-ID [--json]

        Prints every change of one object (written Entity#serial, e.g. Item#42) that the journal holds, oldest
        first: its insert with every value, each update (old → new), each link and unlink seen from the object's
        side (a link made from the other end shows under this object's inverse relationship), and its delete.
        Changes older than the store's checkpoint were compacted away; the object's state in the checkpoint is
        shown instead.

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
        let schema = try location.reader.schema()
        let id = try ObjectName.parse(object, schema)
        let format = ChangeFormat(schema: schema)
        let checkpointSequence = (try? location.reader.manifest().checkpointSequence) ?? 0
        let atCheckpoint = checkpointSequence > 0 ? (try? location.reader.checkpointGraph())?.row(id) : nil
        var entries: [Entry] = []
        let problems = try location.reader.forEachRecord { record in
            entries += Self.entries(of: id, in: record, format)
        }
        if options.json {
            let doc = JSON.object([
                ("store", .string(location.url.path)), ("object", .string(format.object(id))),
                ("checkpointSequence", .int(checkpointSequence)),
                ("atCheckpoint", atCheckpoint.map { format.valuesJSON(id.entity, $0) } ?? .null),
                (
                    "changes",
                    .array(
                        entries.map { e in
                            .object(
                                [
                                    ("sequence", .int(e.record.sequence)),
                                    ("time", .string(ValueFormat.timestamp(e.record.time))), ("kind", .string(e.kind)),
                                ] + e.json)
                        })
                ),
                ("problems", .array(problems.map(problemJSON))),
            ])
            console.line(doc.rendered())
        } else {
            console.line("history of \(format.object(id)) in \(location.url.path)")
            if checkpointSequence > 0 {
                let state = atCheckpoint.map { format.values(id.entity, $0) } ?? "not in the checkpoint"
                console.line("  at checkpoint (sequence \(checkpointSequence)): \(state)")
            }
            for e in entries {
                console.line("  #\(e.record.sequence)  \(ValueFormat.timestamp(e.record.time))  \(e.kind)  \(e.text)")
            }
            if entries.isEmpty { console.line("  no changes in the journal") }
            for p in problems { console.message("damage: \(p)") }
        }
        return problems.isEmpty ? .ok : .failed
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
                "\(format.attributeName(id.entity, $0.attribute)): \(ValueFormat.text($0.old)) → \(ValueFormat.text($0.new))"
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
            let relationship = mine ? format.relationshipName(e.source.entity, e.relationship) : format.inverseName(e)
            let other = mine ? e.target : e.source
            let kind = e.kind == .link ? "link" : "unlink"
            out.append(
                Entry(
                    record: record, kind: kind, text: "\(relationship) → \(format.object(other))",
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

import Foundation
import Trellis

/// `trellis dump STORE`: the journal's change records, decoded, one per commit.
struct DumpCommand: Command {
    static let name = "dump"
    static let summary = "the change records, decoded, one per commit (inserts, updates old → new, links, deletes)"
    static let help = """
        usage: trellis dump STORE [--from SEQ] [--to SEQ] [--entity NAME] [--object ID] [--json]

        Prints every record the journal holds (the commits after the checkpoint), each decoded with the schema it
        was written with (the one in its segment's header): its sequence number, time, file and offset, sizes, and
        one row per change — insert (with every value), update (old → new), link and unlink, delete (with the
        values and links the object had). A schema migration record shows the schemas' fingerprints and versions
        before and after, and one row per step. Damaged records are skipped and reported at the end; the exit code
        is then 1.

        options:
          --from SEQ      start at sequence number SEQ
          --to SEQ        stop after sequence number SEQ
          --entity NAME   only changes to objects of entity NAME (and links to or from them), and migrations
          --object ID     only changes to the object ID, written Entity#serial (e.g. Item#42), and migrations;
                          NAME and ID are those of the newest schema, followed back through migrations
          --json          one JSON object: {"store", "records": [...], "problems": [...]} (see README.md)
        """

    var options: CommonOptions
    var from: UInt64
    var to: UInt64
    var entity: String?
    var object: String?

    init(parsing arguments: inout Arguments) throws {
        from = try arguments.number("--from", as: UInt64.self) ?? 0
        to = try arguments.number("--to", as: UInt64.self) ?? .max
        entity = try arguments.value("--entity")
        object = try arguments.value("--object")
        options = try CommonOptions(parsing: &arguments)
        guard from <= to else { throw UsageError("--from \(from) is after --to \(to)") }
    }

    func run(_ console: Console) throws -> ExitCode {
        let location = try StoreLocation(options.store)
        let epochs = SchemaEpochs(location.reader, newest: try location.reader.schema())
        // The entity or object in each span of the journal between migrations (a migration may renumber it).
        let entities = try entity.map { try epochs.entity($0) }
        let objects = try object.map { try epochs.ids($0) }
        let filters = epochs.schemas.indices.map { span in
            ChangeFilter(entity: entities.map { $0[span]?.entity }, object: objects.map { $0[span] })
        }
        if options.json { console.line("{\n  \"store\": \(quoted(location.url.path)),\n  \"records\": [") }
        var shown = 0
        let progress = console.progress("reading records")
        let problems = try location.reader.forEachRecord { record in
            progress.update(shown)
            guard record.sequence >= from, record.sequence <= to else { return }
            // Each record is named in its own schema; a migration record is always shown.
            let format = ChangeFormat(schema: record.schema)
            let filter = filters[epochs.span(of: record.sequence)]
            let changes = filter.apply(record.changes)
            if changes.isEmpty && filter.isActive && !record.isMigration { return }
            if options.json {
                console.write((shown > 0 ? ",\n    " : "    ") + format.json(record, changes).rendered(pretty: false))
            } else {
                console.line(format.heading(record))
                if let migration = record.migration {
                    for row in MigrationFormat.rows(migration) { console.line(row) }
                }
                for row in format.rows(changes) { console.line(row) }
            }
            shown += 1
        }
        progress.finish()
        if options.json {
            let list = JSON.array(problems.map(problemJSON)).rendered(pretty: false)
            console.line((shown > 0 ? "\n" : "") + "  ],\n  \"problems\": \(list)\n}")
        } else {
            if shown == 0 { console.line("no records match") }
            for p in problems { console.message("damage: \(p)") }
        }
        return problems.isEmpty ? .ok : .failed
    }

    private func quoted(_ s: String) -> String {
        var out = ""
        JSON.quote(s, into: &out)
        return out
    }
}

/// A reader problem in JSON, as `verify`, `dump`, `history` and `stats` all print it.
func problemJSON(_ p: JournalProblem) -> JSON {
    .object([
        ("class", .string(p.kind.rawValue)), ("file", .string(p.file)), ("offset", .int(p.offset)),
        ("message", .string(p.message)),
    ])
}

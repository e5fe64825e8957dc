import Foundation
import Trellis

/// `trellis export STORE [--as-of SEQ]`: the object graph as JSON, now or as of an earlier commit.
struct ExportCommand: Command {
    static let name = "export"
    static let summary = "the object graph as JSON, as of now or of a sequence number still in the journal"
    static let help = """
        usage: trellis export STORE [--as-of SEQ]

        Writes every object of the store as JSON: {"store", "sequence", "schemaFingerprint", "entities": {NAME:
        [{"id", "values", "relationships"}]}}, one object per line inside its entity's array. With --as-of, the
        graph as it was right after commit SEQ, rebuilt from the checkpoint and the journal (in the schema the store
        had then: a migration after SEQ is not applied); SEQ must be between the checkpoint's sequence number and
        the last commit. Values are encoded as README.md describes.

        options:
          --as-of SEQ   the graph as of sequence number SEQ (default: the newest)
          --json        accepted for symmetry; export always writes JSON
        """

    var options: CommonOptions
    var asOf: UInt64?

    init(parsing arguments: inout Arguments) throws {
        asOf = try arguments.number("--as-of", as: UInt64.self)
        options = try CommonOptions(parsing: &arguments)
    }

    /// Ends the journal walk once the records past `--as-of` begin.
    private struct Done: Error {}

    func run(_ console: Console) throws -> ExitCode {
        let location = try StoreLocation(options.store)
        let reader = location.reader
        var graph = try reader.checkpointSnapshot()
        let checkpoint = graph.sequence
        if let asOf, asOf < checkpoint {
            throw CommandFailure(
                "sequence \(asOf) is before the checkpoint (sequence \(checkpoint)): compaction folded the records "
                    + "before it into the checkpoint; the earliest --as-of is \(checkpoint)")
        }
        let target = asOf ?? .max
        var problems: [JournalProblem] = []
        let progress = console.progress("replaying")
        do {
            problems = try reader.forEachRecord { record in
                guard record.sequence <= target else { throw Done() }
                graph = try record.applied(to: graph)
                progress.update(Int(record.sequence))
            }
        } catch is Done {}
        progress.finish()
        if let asOf, graph.sequence != asOf {
            throw CommandFailure("the journal ends at sequence \(graph.sequence); there is no sequence \(asOf)")
        }
        write(graph, location, console)
        for p in problems { console.message("damage: \(p) — the export may be missing what it held") }
        return problems.isEmpty ? .ok : .failed
    }

    private func write(_ graph: Snapshot, _ location: StoreLocation, _ console: Console) {
        let schema = graph.schema
        let format = ChangeFormat(schema: schema)
        var head = "{\n  \"store\": "
        JSON.quote(location.url.path, into: &head)
        head +=
            ",\n  \"sequence\": \(graph.sequence),\n  \"schemaFingerprint\": \"\(StoreFileName.hex16(schema.fingerprint))\""
        console.line(head + ",\n  \"entities\": {")
        for (e, entity) in schema.entities.enumerated() {
            var name = ""
            JSON.quote(entity.name, into: &name)
            console.write("    \(name): [")
            let targets = entity.relationships.map { (try? schema.entityNumber($0.target)) ?? 0 }
            let keys = entity.relationships.compactMap { try? schema.relationship(entity.name, $0.name) }
            var first = true
            for row in graph.rows(entity: UInt32(e)) {
                var links: [(String, JSON)] = []
                for (k, relationship) in entity.relationships.enumerated() {
                    let serials = row.targetSerials(keys[k])
                    let ids = serials.map { ObjectID(entity: targets[k], serial: $0) }
                    links.append((relationship.name, .array(ids.map { .string(format.object($0)) })))
                }
                let object = JSON.object([
                    ("id", .string(format.object(row.id))), ("values", format.valuesJSON(UInt32(e), row.values)),
                    ("relationships", .object(links)),
                ])
                console.write((first ? "\n      " : ",\n      ") + object.rendered(pretty: false))
                first = false
            }
            console.line((first ? "" : "\n    ") + "]" + (e + 1 < schema.entities.count ? "," : ""))
        }
        console.line("  }\n}")
    }
}

import Foundation
import Trellis

/// `trellis export STORE [--as-of SEQ] [--entity NAME]`: the object graph as JSON, now or as of an earlier commit.
struct ExportCommand: Command {
    static let name = "export"
    static let summary = "the object graph as JSON, as of now or of a sequence number still in the journal"
    static let help = """
        usage: trellis export STORE [--as-of SEQ] [--entity NAME]

        Writes every object of the store as JSON: {"store", "sequence", "schemaFingerprint", "entities": {NAME:
        [{"id", "values", "relationships"}]}}, one object per line inside its entity's array. With --as-of, the
        graph as it was right after commit SEQ, rebuilt from the checkpoint and the journal (in the schema the store
        had then: a migration after SEQ is not applied); SEQ must be between the checkpoint's sequence number and
        the last commit. With --entity, only the objects of entity NAME (named in that schema) are written, under
        "entities" as before. Values are encoded as README.md describes.

        options:
          --as-of SEQ     the graph as of sequence number SEQ (default: the newest)
          --entity NAME   only the objects of entity NAME
          --json          accepted for symmetry; export always writes JSON
        """

    var options: CommonOptions
    var asOf: UInt64?
    var entity: String?

    init(parsing arguments: inout Arguments) throws {
        asOf = try arguments.number("--as-of", as: UInt64.self)
        entity = try arguments.value("--entity")
        options = try CommonOptions(parsing: &arguments)
    }

    /// Ends the journal walk once the records past `--as-of` begin.
    private struct Done: Error {}

    func run(_ console: Console) throws -> ExitCode {
        let location = try StoreLocation(options.store)
        let reader = location.reader
        // A name no schema of the journal has is refused before anything is replayed.
        if let entity { _ = try SchemaEpochs(reader, newest: try reader.schema()).entity(entity) }
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
        var only: Int?
        if let entity {
            guard let number = try? graph.schema.entityNumber(entity) else {
                throw UsageError(
                    "the store had no entity '\(entity)' as of sequence \(graph.sequence) (it had: "
                        + "\(ObjectName.entityNames(graph.schema)))")
            }
            only = Int(number)
        }
        write(graph, only: only, location, console)
        for p in problems { console.message("damage: \(p) — the export may be missing what it held") }
        return problems.isEmpty ? .ok : .failed
    }

    /// Writes the graph's objects, of every entity or of entity number `only`.
    private func write(_ graph: Snapshot, only: Int?, _ location: StoreLocation, _ console: Console) {
        let schema = graph.schema
        let format = ChangeFormat(schema: schema)
        var head = "{\n  \"store\": "
        JSON.quote(location.url.path, into: &head)
        head +=
            ",\n  \"sequence\": \(graph.sequence),\n  \"schemaFingerprint\": \"\(StoreFileName.hex16(schema.fingerprint))\""
        console.line(head + ",\n  \"entities\": {")
        // A removed entity's placeholder has no objects, and is no entity: it is left out.
        let shown = schema.entities.indices.filter { (only == nil && !schema.entities[$0].isRetired) || $0 == only }
        for (position, e) in shown.enumerated() {
            let entity = schema.entities[e]
            var name = ""
            JSON.quote(entity.name, into: &name)
            console.write("    \(name): [")
            var first = true
            for row in graph.rows(entity: UInt32(e)) {
                let object = format.objectJSON(row)
                console.write((first ? "\n      " : ",\n      ") + object.rendered(pretty: false))
                first = false
            }
            console.line((first ? "" : "\n    ") + "]" + (position + 1 < shown.count ? "," : ""))
        }
        console.line("  }\n}")
    }
}

import Foundation
import Trellis

/// `trellis stats STORE`: how big the records are, when the commits happened, and how each entity compresses.
struct StatsCommand: Command {
    static let name = "stats"
    static let summary = "record sizes, commits over time, compression per entity, as text histograms"
    static let help = """
        usage: trellis stats STORE [--json]

        Reads every journal record and prints: a histogram of record sizes as stored (power-of-two buckets), a
        histogram of commits over time (ten equal spans from the first record to the last), and per entity the
        changes the records made and their bytes stored and uncompressed, with the compression ratio. A record is
        compressed as a whole, so its bytes are shared out among the entities it touches in proportion to its
        changes to each. Records are read with the schema they were written with: changes to an entity under a name
        it had before a migration are listed under that name, after the newest schema's entities.

        options:
          --json    the same figures as one JSON object (README.md)
        """

    var options: CommonOptions

    init(parsing arguments: inout Arguments) throws { options = try CommonOptions(parsing: &arguments) }

    func run(_ console: Console) throws -> ExitCode {
        let location = try StoreLocation(options.store)
        let survey = try JournalSurvey(location, replay: false, console: console)
        let sizes = Histogram.powerOfTwoBuckets(survey.recordSizes)
        let bins = Histogram.timeBins(survey.times)
        // The newest schema's entities, then names only older records use (an entity renamed or removed since).
        let current = survey.schema.entities.map(\.name)
        let older = survey.entities.keys.filter { !current.contains($0) }.sorted()
        let entities = (current + older).map { ($0, survey.entities[$0] ?? JournalSurvey.EntityTally()) }
        if options.json {
            console.line(json(location, survey, sizes, bins, entities).rendered())
        } else {
            console.line("stats \(location.url.path): \(survey.records) records")
            console.line("record sizes (stored):")
            for line in Histogram.rows(sizes.map { ("≤ " + ValueFormat.bytes($0.upTo), $0.count) }) {
                console.line(line)
            }
            console.line("commits over time:")
            let labels = bins.map { ValueFormat.timestamp($0.start).prefix(23) + "Z" }
            for line in Histogram.rows(zip(labels, bins).map { (String($0), $1.count) }) { console.line(line) }
            console.line("per entity:")
            for (name, t) in entities {
                let ratio = t.storedBytes > 0 ? String(format: "%.2f:1", t.uncompressedBytes / t.storedBytes) : "-"
                console.line(
                    "  \(name): \(t.inserts) inserts, \(t.updates) updates, \(t.links) link edits, \(t.deletes) deletes; "
                        + "\(ValueFormat.bytes(Int(t.storedBytes))) stored, "
                        + "\(ValueFormat.bytes(Int(t.uncompressedBytes))) uncompressed: \(ratio)")
            }
            for p in survey.problems { console.message("damage: \(p)") }
        }
        return survey.problems.isEmpty ? .ok : .failed
    }

    private func json(
        _ location: StoreLocation, _ survey: JournalSurvey, _ sizes: [(upTo: Int, count: Int)],
        _ bins: [(start: Date, end: Date, count: Int)], _ entities: [(String, JournalSurvey.EntityTally)]
    ) -> JSON {
        let sorted = survey.recordSizes.sorted()
        return .object([
            ("store", .string(location.url.path)),
            ("records", .int(survey.records)),
            (
                "recordSizes",
                .object([
                    ("min", .int(sorted.first ?? 0)), ("median", .int(sorted.isEmpty ? 0 : sorted[sorted.count / 2])),
                    ("max", .int(sorted.last ?? 0)),
                    (
                        "histogram",
                        .array(sizes.map { .object([("upToBytes", .int($0.upTo)), ("count", .int($0.count))]) })
                    ),
                ])
            ),
            (
                "commitsOverTime",
                .array(
                    bins.map {
                        .object([
                            ("start", .string(ValueFormat.timestamp($0.start))),
                            ("end", .string(ValueFormat.timestamp($0.end))), ("count", .int($0.count)),
                        ])
                    })
            ),
            (
                "entities",
                .array(
                    entities.map { name, t in
                        .object([
                            ("name", .string(name)), ("inserts", .int(t.inserts)), ("updates", .int(t.updates)),
                            ("links", .int(t.links)), ("deletes", .int(t.deletes)),
                            ("storedBytes", .int(Int(t.storedBytes.rounded()))),
                            ("uncompressedBytes", .int(Int(t.uncompressedBytes.rounded()))),
                            (
                                "compressionRatio",
                                t.storedBytes > 0
                                    ? .double((t.uncompressedBytes / t.storedBytes * 1000).rounded() / 1000) : .null
                            ),
                        ])
                    })
            ),
            ("problems", .array(survey.problems.map(problemJSON))),
        ])
    }
}

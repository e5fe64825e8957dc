import Foundation
import Trellis

/// `trellis info STORE`: what a store holds and how it is laid out on disk.
struct InfoCommand: Command {
    static let name = "info"
    static let summary = "format, schema, object counts, checkpoint and segments, compression, reclaimable space"
    static let help = """
        usage: trellis info STORE [--json]

        Describes the store in directory STORE without changing it (it can run beside a live writer): format
        version, the schema the store carries (entities, attributes, relationships, indexes) with its version and
        the migrations the store went through (each with its sequence number, time, the schemas' fingerprints and
        versions before and after, and its steps), objects per entity, the checkpoint and each journal segment with
        its size and sequence range, the compression ratio of the journal, and about how many bytes
        `trellis compact` would reclaim.

        Exits 1 when it meets damage on the way (it still prints what it could read; `trellis verify` says more).

        options:
          --json    print the fields documented in Tools/trellis/README.md as one JSON object
        """

    var options: CommonOptions

    init(parsing arguments: inout Arguments) throws { options = try CommonOptions(parsing: &arguments) }

    init(store: String, json: Bool) {
        options = CommonOptions(store: store, json: json)
    }

    func run(_ console: Console) throws -> ExitCode {
        let location = try StoreLocation(options.store)
        let survey = try JournalSurvey(location, replay: true, console: console)
        let history = try? JournalReader(directory: location.url).historySummary()
        let report = InfoReport(location: location, survey: survey, history: history ?? nil)
        if options.json {
            console.line(report.json.rendered())
        } else {
            for line in report.lines { console.line(line) }
        }
        return survey.problems.isEmpty ? .ok : .failed
    }
}

/// The figures `info` prints, computed once for both the text and the JSON.
struct InfoReport {
    let location: StoreLocation
    let survey: JournalSurvey
    /// The store's `HISTORY` file, if it has one (format version 7).
    var history: HistorySummary?

    /// Whether a segment outside the manifest's range is kept as retained history.
    func isHistory(_ s: JournalSurvey.Segment) -> Bool {
        guard let history, let m = survey.manifest else { return false }
        return s.id >= history.firstKeptSegment && s.id < m.firstSegment
    }

    var checkpoint: (name: String, sequence: UInt64, bytes: Int)? {
        guard let m = survey.manifest, m.checkpointSequence > 0 else { return nil }
        let name = StoreFileName.checkpointName(m.checkpointSequence)
        return (name, m.checkpointSequence, location.bytes(of: name) ?? Int(m.checkpointBytes))
    }

    var lastSequence: UInt64 {
        survey.graph?.sequence ?? survey.lastSequence ?? survey.manifest?.checkpointSequence ?? 0
    }

    /// Files that are neither the manifest, the live checkpoint nor a live segment: the lock, backups of dropped
    /// tails, orphans.
    var otherFiles: [(name: String, bytes: Int)] {
        let kept =
            survey.segments.filter { survey.isLive($0) || isHistory($0) }.map(\.name)
            + (history?.keptCheckpoints ?? []).filter { $0 > 0 }.map(StoreFileName.checkpointName) + ["HISTORY"]
        let live = Set(kept + [checkpoint?.name ?? "", "MANIFEST"])
        return location.files.filter { !live.contains($0.name) }
    }

    /// What compaction would leave: one checkpoint of the live objects, sized at the bytes per object of the current
    /// checkpoint (or, without one, of the journal's inserts). An estimate: the exact size is known only by writing.
    var reclaimableEstimate: Int {
        let storeBytes = location.files.filter { StoreFileName.isStoreFile($0.name) }.reduce(0) { $0 + $1.bytes }
        let live = survey.graph?.objectCount ?? 0
        let perObject: Double
        if let checkpoint, let objects = survey.checkpointObjects, objects > 0 {
            perObject = Double(checkpoint.bytes) / Double(objects)
        } else {
            let inserts = survey.entities.values.reduce(0) { $0 + $1.inserts }
            perObject = inserts == 0 ? 0 : Double(survey.storedBytes) / Double(inserts)
        }
        return max(0, storeBytes - Int(perObject * Double(live)))
    }

    var lines: [String] {
        var out: [String] = []
        let m = survey.manifest
        out.append("store       \(location.url.path)")
        var format = "format      version \(location.formatVersion().map(String.init) ?? "unknown")"
        if let m { format += ", manifest generation \(m.generation)" }
        out.append(format)
        let version = survey.schema.history.last?.toVersion.map { ", version \($0)" } ?? ""
        out.append(
            "schema      \(survey.schema.entities.filter { !$0.isRetired }.count) entities, fingerprint "
                + StoreFileName.hex16(survey.schema.fingerprint) + version)
        out += SchemaFormat.lines(survey.schema)
        out += MigrationFormat.historyLines(survey.schema)
        if let graph = survey.graph {
            let counts = graph.schema.entities.enumerated().filter { !$1.isRetired }.map {
                "\($1.name) \(graph.count(entity: UInt32($0)))"
            }
            out.append("objects     \(counts.joined(separator: ", ")) (as of sequence \(graph.sequence))")
        } else {
            out.append("objects     unknown: the records do not replay (run `trellis verify`)")
        }
        if let checkpoint {
            out.append(
                "checkpoint  \(checkpoint.name): sequence \(checkpoint.sequence), \(ValueFormat.bytes(checkpoint.bytes))"
            )
        } else {
            out.append("checkpoint  none (the journal holds every commit since the store was created)")
        }
        out.append("segments    \(survey.segments.filter(survey.isLive).count)")
        for s in survey.segments {
            let range = s.firstSequence.map { "sequences \($0)…\(s.lastSequence ?? $0)" } ?? "no records"
            let orphan =
                survey.isLive(s) ? "" : isHistory(s) ? " — retained history" : " — not in the manifest (orphan)"
            out.append("  \(s.name)  \(ValueFormat.bytes(s.bytes))  \(range) (\(s.records) records)\(orphan)")
        }
        if let m { out.append("durable     " + Self.durableLine(m, last: lastSequence)) }
        out.append("history     " + historyLine)
        out.append(
            "journal     \(survey.records) records, \(ValueFormat.bytes(survey.storedBytes)) stored, "
                + "\(ValueFormat.bytes(survey.uncompressedBytes)) uncompressed: compression "
                + String(format: "%.2f:1", survey.compressionRatio))
        out.append(
            "total       \(ValueFormat.bytes(location.totalBytes)); `trellis compact` would reclaim about "
                + ValueFormat.bytes(reclaimableEstimate))
        if !otherFiles.isEmpty {
            out.append(
                "other files "
                    + otherFiles.map { "\($0.name) (\(ValueFormat.bytes($0.bytes)))" }.joined(separator: ", "))
        }
        if survey.problems.isEmpty {
            out.append("problems    none met while reading (`trellis verify` checks everything)")
        } else {
            out.append("problems    \(survey.problems.count) — run `trellis verify` for the full report:")
            for p in survey.problems { out.append("  \(p)") }
        }
        return out
    }

    var json: JSON {
        var pairs: [(String, JSON)] = []
        pairs.append(("store", .string(location.url.path)))
        pairs.append(("formatVersion", location.formatVersion().map { JSON.int($0) } ?? .null))
        pairs.append(("manifest", survey.manifest.map(manifestJSON) ?? .null))
        pairs.append(("schema", SchemaFormat.json(survey.schema)))
        pairs.append(("schemaVersion", survey.schema.history.last?.toVersion.map { .string($0) } ?? .null))
        pairs.append(("migrations", .array(survey.schema.history.map(MigrationFormat.json))))
        pairs.append(("objectCounts", survey.graph.map(countsJSON) ?? .null))
        pairs.append(("lastSequence", .int(lastSequence)))
        let checkpointJSON: JSON =
            checkpoint.map { c in
                .object([("file", .string(c.name)), ("sequence", .int(c.sequence)), ("bytes", .int(c.bytes))])
            } ?? .null
        pairs.append(("checkpoint", checkpointJSON))
        pairs.append(("segments", .array(survey.segments.map(segmentJSON))))
        pairs.append(("records", .int(survey.records)))
        pairs.append(("storedBytes", .int(survey.storedBytes)))
        pairs.append(("uncompressedBytes", .int(survey.uncompressedBytes)))
        pairs.append(("compressionRatio", .double((survey.compressionRatio * 1000).rounded() / 1000)))
        pairs.append(("totalBytes", .int(location.totalBytes)))
        pairs.append(("reclaimableBytesEstimate", .int(reclaimableEstimate)))
        let others = otherFiles.map { JSON.object([("file", .string($0.name)), ("bytes", .int($0.bytes))]) }
        pairs.append(("otherFiles", .array(others)))
        pairs.append(("history", historyJSON))
        pairs.append(("problemCount", .int(survey.problems.count)))
        return .object(pairs)
    }

    /// What the manifest says is durable, against the last record read: the records after it were synced by their
    /// commits but are not on the manifest's record until the next clean close, rotation or compaction.
    static func durableLine(_ m: JournalReader.ManifestSummary, last: UInt64) -> String {
        guard m.durableSequence > 0 else {
            return "nothing recorded yet (no clean close, rotation or compaction since format version 5)"
        }
        var line = "through sequence \(m.durableSequence) (on the manifest's record"
        if last > m.durableSequence {
            line += "; \(last - m.durableSequence) later record\(last - m.durableSequence == 1 ? "" : "s") since"
        } else if last < m.durableSequence {
            line += "; the journal ends at \(last): records are missing, run `trellis verify`"
        }
        return line + ")"
    }

    /// What is retained of the history and why: from which commit, the files kept beyond the journal, the rule of
    /// the last compaction, and the consumers' acknowledgements.
    var historyLine: String {
        let journalStart = (survey.manifest?.checkpointSequence ?? 0) + 1
        guard let history else {
            return "from sequence \(journalStart) (the journal since the last checkpoint; no retention rule has kept "
                + "more, no HISTORY file)"
        }
        var line = "from sequence \(history.firstRetained)"
        if history.keptCheckpoints.isEmpty {
            line += " (the journal since the last checkpoint)"
        } else {
            let checkpoints = history.keptCheckpoints.map { $0 == 0 ? "the empty store" : "checkpoint \($0)" }
            line +=
                " (kept beyond the journal: \(checkpoints.joined(separator: ", ")) and segments from "
                + "\(history.firstKeptSegment))"
        }
        line += "; retention at the last compaction: \(history.retention.summary)"
        if !history.acknowledged.isEmpty {
            line +=
                "; acknowledged: "
                + history.acknowledged.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(
                    separator: ", ")
        }
        return line + "; store id \(history.storeID.uuidString)"
    }

    private var historyJSON: JSON {
        guard let history else {
            return .object([("firstRetained", .int((survey.manifest?.checkpointSequence ?? 0) + 1))])
        }
        return .object([
            ("firstRetained", .int(history.firstRetained)), ("storeID", .string(history.storeID.uuidString)),
            ("keptCheckpoints", .array(history.keptCheckpoints.map { .int($0) })),
            ("firstKeptSegment", .int(history.firstKeptSegment)), ("retention", .string(history.retention.summary)),
            (
                "acknowledged",
                .object(history.acknowledged.sorted { $0.key < $1.key }.map { ($0.key, JSON.int($0.value)) })
            ),
        ])
    }

    private func manifestJSON(_ m: JournalReader.ManifestSummary) -> JSON {
        .object([
            ("generation", .int(m.generation)), ("schemaFingerprint", .string(StoreFileName.hex16(m.fingerprint))),
            ("checkpointSequence", .int(m.checkpointSequence)), ("firstSegment", .int(m.firstSegment)),
            ("lastSegment", .int(m.lastSegment)), ("durableSequence", .int(m.durableSequence)),
        ])
    }

    private func countsJSON(_ graph: Snapshot) -> JSON {
        .object(
            graph.schema.entities.enumerated().filter { !$1.isRetired }.map {
                ($1.name, .int(graph.count(entity: UInt32($0))))
            })
    }

    private func segmentJSON(_ s: JournalSurvey.Segment) -> JSON {
        .object([
            ("file", .string(s.name)), ("id", .int(s.id)), ("bytes", .int(s.bytes)), ("records", .int(s.records)),
            ("firstSequence", s.firstSequence.map { .int($0) } ?? .null),
            ("lastSequence", s.lastSequence.map { .int($0) } ?? .null),
            ("live", .bool(survey.isLive(s))),
        ])
    }
}

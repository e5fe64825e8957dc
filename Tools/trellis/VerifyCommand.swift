import Foundation
import Trellis

/// `trellis verify STORE`: checks every file, checksum, sequence number and reference, and says what is wrong where.
struct VerifyCommand: Command {
    static let name = "verify"
    static let summary = "check every file, checksum, sequence and reference; report each problem with file and offset"
    static let help = """
        usage: trellis verify STORE [--json]

        Checks the store in directory STORE without changing it: the manifest, the checkpoint (every chunk), every
        journal record (checksum, length, type, salt, sequence number, decoding with the schema of its segment,
        that a schema migration leads from the schema before it to its segment's, and that each record applies to
        the graph before it), files the manifest names but are missing, files it does not name (orphans), and
        finally both ends of every relationship of the rebuilt graph. Each problem is printed with its
        file, byte offset and class: torn tail, unacknowledged hole, rot, vanished tail, checksum, length, zeroed,
        sequence gap, salt, unknown type, missing file, orphan file, header, manifest, decode, schema, reference.

        Exits 0 when the store is clean, 1 when anything is wrong.

        options:
          --json    print the fields documented in Tools/trellis/README.md as one JSON object
        """

    var options: CommonOptions

    init(parsing arguments: inout Arguments) throws { options = try CommonOptions(parsing: &arguments) }

    init(store: String, json: Bool) {
        options = CommonOptions(store: store, json: json)
    }

    /// A problem as `verify` reports it: the reader's classes plus `reference` for a graph invariant that fails.
    struct Finding {
        var kind: String
        var file: String?
        var offset: Int?
        var message: String

        init(_ problem: JournalProblem) {
            kind = problem.kind.rawValue
            file = problem.file
            offset = problem.offset
            message = problem.message
        }

        init(reference text: String) {
            kind = "reference"
            message = text
        }

        var text: String {
            guard let file, let offset else { return "\(kind): \(message)" }
            return "\(file) at offset \(offset): \(kind): \(message)"
        }

        var json: JSON {
            .object([
                ("class", .string(kind)), ("file", file.map { .string($0) } ?? .null),
                ("offset", offset.map { .int($0) } ?? .null), ("message", .string(message)),
            ])
        }
    }

    func run(_ console: Console) throws -> ExitCode {
        let location = try StoreLocation(options.store)
        let progress = console.progress("verifying")
        progress.update(0)
        var findings: [Finding] = []
        var result: JournalVerification?
        do {
            let verification = try location.reader.verify()
            findings = verification.problems.map(Finding.init)
            result = verification
            if verification.isClean { findings += try referenceFindings(location.reader) }
        } catch let problem as JournalProblem {
            findings.append(Finding(problem))
        }
        progress.finish()
        let repair = Self.suggestedRepair(findings)
        if options.json {
            console.line(json(location, result, findings, repair).rendered())
        } else {
            for line in lines(location, result, findings, repair) { console.line(line) }
        }
        return findings.isEmpty ? .ok : .failed
    }

    /// Rebuilds the graph the way recovery does and runs its invariant checks: the reader checked the bytes, this
    /// checks what they mean (a relationship end without its inverse, a link to an object that is gone).
    private func referenceFindings(_ reader: JournalReader) throws -> [Finding] {
        var graph = try reader.checkpointSnapshot()
        try reader.forEachRecord { record in graph = try record.applied(to: graph) }
        return ReferenceCheck.problems(graph).map(Finding.init(reference:))
    }

    /// The repair that fits: only a torn tail or an unacknowledged hole → `--truncate-tail`; anything else →
    /// `--salvage`; nothing → nil.
    static func suggestedRepair(_ findings: [Finding]) -> String? {
        if findings.isEmpty { return nil }
        // History alone: recovery rebuilds the state without it, so `repair` keeps it; compacting drops it.
        if findings.allSatisfy({ $0.kind == JournalProblem.Kind.history.rawValue }) { return "compact" }
        let dropped = [JournalProblem.Kind.tornTail.rawValue, JournalProblem.Kind.unacknowledgedHole.rawValue]
        return findings.allSatisfy({ dropped.contains($0.kind) }) ? "truncate-tail" : "salvage"
    }

    private func lines(
        _ location: StoreLocation, _ v: JournalVerification?, _ findings: [Finding], _ repair: String?
    ) -> [String] {
        var out = ["verify \(location.url.path)"]
        if let v {
            out.append("  checkpoint  " + (v.checkpointSequence > 0 ? "sequence \(v.checkpointSequence)" : "none"))
            out.append("  records     \(v.records) checked, through sequence \(v.lastSequence)")
            let counts = v.objectCounts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            out.append("  objects     \(counts.joined(separator: ", "))")
        }
        if findings.isEmpty {
            out.append("  references  both ends of every relationship agree")
            out.append("clean: no problems")
            return out
        }
        out.append("\(findings.count) problem\(findings.count == 1 ? "" : "s"):")
        for f in findings { out.append("  \(f.text)") }
        if repair == "compact" {
            out.append(
                "history only: the store opens with the state recovery rebuilds; `trellis compact \(location.url.path)` "
                    + "replaces the journal with a checkpoint of that state, dropping the contradicting history (repair "
                    + "cannot: it keeps what recovery accepts)")
        } else if let repair {
            out.append("damaged: `trellis repair \(location.url.path) --\(repair)` backs the store up and repairs it")
        }
        return out
    }

    private func json(
        _ location: StoreLocation, _ v: JournalVerification?, _ findings: [Finding], _ repair: String?
    ) -> JSON {
        .object([
            ("store", .string(location.url.path)),
            ("clean", .bool(findings.isEmpty)),
            ("checkpointSequence", v.map { .int($0.checkpointSequence) } ?? .null),
            ("records", v.map { .int($0.records) } ?? .null),
            ("lastSequence", v.map { .int($0.lastSequence) } ?? .null),
            (
                "objectCounts",
                v.map { .object($0.objectCounts.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) }) } ?? .null
            ),
            ("problems", .array(findings.map(\.json))),
            ("suggestedRepair", repair.map { .string($0) } ?? .null),
        ])
    }
}

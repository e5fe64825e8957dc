import Foundation
import Trellis

/// `trellis repair STORE --truncate-tail | --salvage`: fixes a damaged store after saying what it will drop.
struct RepairCommand: Command {
    static let name = "repair"
    static let summary = "back up, say what would be dropped, confirm, then drop a torn tail or salvage"
    static let help = """
        usage: trellis repair STORE (--truncate-tail | --salvage) [--yes] [--backup DIR]

        Repairs the store in directory STORE:
          --truncate-tail  drops the partial record a crash left at the end of the last segment (it holds no
                           acknowledged commit), or an unacknowledged hole and everything after it (damage
                           followed only by records whose watermarks say none was acknowledged: point-in-time
                           recovery); refuses if there is any other damage
          --salvage        skips every damaged record and every record that no longer applies, keeps the rest,
                           and rewrites the store as a fresh checkpoint (damaged segments are kept as *.damaged)
        First it lists exactly what will be dropped (file, offset, bytes, lost sequence numbers) and the commit the
        store will end at; then it asks for confirmation on stdin (the end of input counts as no); then it copies
        the whole store to STORE.backup-<time> (or DIR); then it repairs and verifies the result. A clean store is
        left alone, so running it twice is harmless. Files no manifest references are removed on the way.

        options:
          --yes           do not ask
          --backup DIR    where to copy the store before repairing (must not exist)

        Exits 0 when the store is clean afterwards (or was), 1 when it is not or the repair was not confirmed,
        3 when a writer holds the store.
        """

    enum Mode: String {
        case truncateTail = "truncate-tail"
        case salvage

        /// The recovery policy the repair opens with: a torn tail and an unacknowledged hole are what
        /// `.pointInTime` drops (a superset of `.tolerateTornTail`).
        var recovery: StoreOptions.Recovery { self == .salvage ? .salvage : .pointInTime }
    }

    var store: String
    var mode: Mode
    var yes: Bool
    var backup: String?

    init(parsing arguments: inout Arguments) throws {
        let truncate = arguments.flag("--truncate-tail")
        let salvage = arguments.flag("--salvage")
        guard truncate != salvage else { throw UsageError("say either --truncate-tail or --salvage") }
        mode = truncate ? .truncateTail : .salvage
        yes = arguments.flag("--yes", "-y")
        backup = try arguments.value("--backup")
        store = try arguments.positional("STORE")
    }

    func run(_ console: Console) throws -> ExitCode {
        let location = try StoreLocation(store)
        let problems = try location.reader.verify().problems
        if problems.isEmpty {
            console.line("nothing to repair: \(location.url.path) is clean")
            return .ok
        }
        if StoreBackup.isLocked(location.url) {
            throw CannotOpen("cannot repair \(store): another process holds it open for writing; close it first")
        }
        let schema = try location.reader.schema()
        let plan = try RepairPlan(location: location, schema: schema, mode: mode, problems: problems)
        for line in plan.lines { console.line(line) }
        guard plan.isPossible else { return .failed }
        guard yes || console.confirm("Back the store up and repair it?") else {
            console.message("not confirmed; nothing was changed (pass --yes to repair without asking)")
            return .failed
        }
        let copy = try StoreBackup.copy(location.url, to: backup)
        console.line("backed up to \(copy.path)")
        // The dropped tail's own backup goes with the copy, so a repair needs no free space on the store's disk
        // (with `--backup DIR` on another one) beyond what truncating and rewriting take.
        let options = StoreOptions(recovery: mode.recovery, compaction: .manual, tailBackupDirectory: copy)
        let opened: Store
        do {
            opened = try Store(directory: location.url, schema: schema, options: options)
        } catch let error as TrellisError where error.code == .locked {
            throw CannotOpen("cannot repair \(store): \(error.message)")
        }
        let report = opened.recoveryReport
        try opened.close()
        for warning in opened.warnings { console.line("warning: \(warning)") }
        if let report {
            console.line("repaired: \(report)")
            if let backup = report.tailBackup { console.line("the dropped bytes are also in \(backup)") }
            if !report.damagedFiles.isEmpty {
                console.line(
                    "the replaced files are kept as \(report.damagedFiles.joined(separator: ", ")) (delete at will)")
            }
        }
        return try VerifyCommand(store: store, json: false).run(console)
    }
}

/// What a repair would drop, found by opening the store read-only with the repair's recovery policy (which
/// changes nothing) and comparing with the journal's own records.
struct RepairPlan {
    var lines: [String] = []
    var isPossible = true

    init(location: StoreLocation, schema: Schema, mode: RepairCommand.Mode, problems: [JournalProblem]) throws {
        let path = location.url.path
        lines.append("\(path) has \(problems.count) problem\(problems.count == 1 ? "" : "s"):")
        for p in problems { lines.append("  \(p)") }
        let removable: Set<JournalProblem.Kind> = [.tornTail, .unacknowledgedHole, .orphanFile]
        if mode == .truncateTail, let other = problems.first(where: { !removable.contains($0.kind) }) {
            lines.append(
                "--truncate-tail drops only a torn tail or an unacknowledged hole, and this store has other damage (\(other.kind.rawValue)); "
                    + "nothing was changed. `trellis repair \(path) --salvage` keeps what can be kept")
            isPossible = false
            return
        }
        let dryRun = try Store(
            directory: location.url, schema: schema,
            options: StoreOptions(recovery: mode.recovery, readOnly: true))
        guard let report = dryRun.recoveryReport else { return }
        lines.append("the repair will drop:")
        if let torn = report.tornTail {
            lines.append("  \(report.droppedBytes) bytes at the end of \(torn.file), from offset \(torn.offset)")
        }
        if let hole = report.hole {
            lines.append(
                "  \(report.droppedBytes) bytes at the end of \(hole.file), from offset \(hole.offset): an "
                    + "unacknowledged hole and the \(report.droppedRecords) unacknowledged records after it")
        }
        for skipped in report.skipped { lines.append("  what \(skipped) holds") }
        let lost = try Self.lostSequences(location.reader, through: report.lastSequence)
        if !lost.isEmpty { lines.append("  the commits with sequence numbers \(lost)") }
        for orphan in problems where orphan.kind == .orphanFile {
            lines.append("  the file \(orphan.file) (no manifest references it)")
        }
        let counts = schema.entities.enumerated().map { "\($1.name) \(dryRun.snapshot.count(entity: UInt32($0)))" }
        lines.append(
            "the store will hold the commits through sequence \(report.lastSequence): \(counts.joined(separator: ", "))"
        )
    }

    /// Sequence numbers up to `last` that neither the checkpoint nor a valid record holds, as ranges (`4…6, 9`).
    static func lostSequences(_ reader: JournalReader, through last: UInt64) throws -> String {
        let checkpoint = (try? reader.manifest().checkpointSequence) ?? 0
        var present = Set<UInt64>()
        try reader.forEachRecord { present.insert($0.sequence) }
        var ranges: [String] = []
        var start: UInt64?
        var sequence = checkpoint + 1
        while sequence <= last + 1 {
            let missing = sequence <= last && !present.contains(sequence)
            if missing, start == nil { start = sequence }
            if !missing, let s = start {
                ranges.append(s == sequence - 1 ? "\(s)" : "\(s)…\(sequence - 1)")
                start = nil
            }
            sequence += 1
        }
        return ranges.joined(separator: ", ")
    }
}

/// Opens an existing store directory: reads the manifest, loads the checkpoint it names, replays the journal after
/// it through `Graph.applying` (the function live commits use), and applies the recovery policy to any damage.
///
/// The rules (see `journal-format.md`): a torn tail of the last segment is dropped (and backed up) unless the policy
/// is `.strict`; damage followed by valid records, damage in an earlier segment, a sequence gap, a missing segment,
/// or a damaged manifest or checkpoint refuses the open with `.corrupt`, naming file, offset and class, unless the
/// policy is `.salvage`, which skips what it must and asks for a rewrite.
struct StoreRecovery {
    /// What recovery hands to the journal writer.
    struct Recovered {
        var graph: Graph
        var manifest: Manifest
        var tail: JournalWalk.Tail
        var report: RecoveryReport
        var journalBytes: Int
        var segmentBytes: [UInt64: Int]
        /// Salvage skipped damage: the store must be rewritten (compacted) before it is trusted again.
        var needsRewrite: Bool
        var files: StoreFiles
    }

    let layer: any FileLayer
    let directory: String
    let schema: Schema
    let policy: StoreOptions.Recovery
    let readOnly: Bool

    /// The recovered state, or nil when the directory holds no store yet.
    func run() throws -> Recovered? {
        let files = try StoreFiles.list(layer, directory)
        guard files.hasManifestFile else {
            try checkNothingToLose(files)
            return nil
        }
        guard let manifest = files.manifest else {
            throw refusal(
                JournalProblem(.manifest, file: JournalFormat.manifestName, offset: 0, files.manifestProblem ?? "?"))
        }
        if manifest.fingerprint != schema.fingerprint { throw try schemaMismatch(manifest, files) }

        var report = RecoveryReport()
        var graph = Graph(schema: schema)
        if manifest.checkpointSequence > 0 {
            let name = JournalFormat.checkpointName(manifest.checkpointSequence)
            guard files.checkpoints[manifest.checkpointSequence] != nil else {
                throw refusal(
                    JournalProblem(.missingFile, file: name, offset: 0, "the manifest names it; it is not there"))
            }
            let file = try layer.open(joinPath(directory, name), .read)
            defer { file.close() }
            do {
                graph = try Checkpoint.load(file, name: name, schema: schema)
            } catch let problem as JournalProblem {
                throw refusal(problem)
            }
            report.checkpointSequence = manifest.checkpointSequence
        }

        let walker = JournalWalk(
            layer: layer, directory: directory, manifest: manifest, files: files,
            continueAfterDamage: policy == .salvage)
        let outcome = try walker.walk(after: manifest.checkpointSequence) { record in
            let context = "\(record.file) record \(record.frame.header.sequence) at offset \(record.frame.offset)"
            do {
                let payload = try record.frame.payload(file: record.file)
                let changes = try ChangeSetCodec.decode(payload, schema: schema, context: context)
                if policy == .salvage {
                    // Salvage goes on after a record that does not fit, from the graph before it.
                    graph = try graph.applying(changes, sequence: record.frame.header.sequence)
                } else {
                    // Any damage refuses the open, so the graph is never used after a failed apply: apply in place.
                    try graph.apply(changes, sequence: record.frame.header.sequence)
                }
                return nil
            } catch let error as TrellisError where error.code == .corrupt {
                return JournalProblem(.decode, file: record.file, offset: record.frame.offset, error.message)
            }
        }
        let torn = outcome.problems.last.flatMap { $0.kind == .tornTail ? $0 : nil }
        let damage = outcome.problems.filter { $0.kind != .tornTail }
        switch policy {
        case .strict:
            if let first = outcome.problems.first { throw refusal(first) }
        case .tolerateTornTail:
            if let first = damage.first { throw refusal(first) }
        case .salvage:
            report.skipped = damage
        }
        guard var tail = outcome.tail else {
            throw refusal(
                damage.first
                    ?? JournalProblem(.missingFile, file: JournalFormat.manifestName, offset: 0, "no last segment"))
        }
        var journalBytes = outcome.bytes
        var segmentBytes: [UInt64: Int] = [:]
        for (id, name) in files.segments where (manifest.firstSegment...manifest.lastSegment).contains(id) {
            if let file = try? layer.open(joinPath(directory, name), .read) {
                segmentBytes[id] = (try? file.size()) ?? 0
                file.close()
            }
        }
        if let torn {
            report.tornTail = torn
            report.droppedBytes = tail.size - tail.validEnd
            if !readOnly {
                report.tailBackup = try dropTornTail(tail)
                journalBytes -= report.droppedBytes
                segmentBytes[tail.segment] = tail.validEnd
                tail.size = tail.validEnd
            }
        }
        report.replayedRecords = outcome.records
        report.lastSequence = graph.sequence
        return Recovered(
            graph: graph, manifest: manifest, tail: tail, report: report, journalBytes: journalBytes,
            segmentBytes: segmentBytes, needsRewrite: !damage.isEmpty, files: files)
    }

    /// Copies the bytes after the last valid record to a backup file (synced), then truncates the segment there and
    /// syncs it. Returns the backup's name.
    private func dropTornTail(_ tail: JournalWalk.Tail) throws -> String {
        let path = joinPath(directory, tail.name)
        let file = try layer.open(path, .readWrite)
        defer { file.close() }
        let bytes = try file.read(at: tail.validEnd, count: tail.size - tail.validEnd)
        let backup = "torn-\(JournalFormat.hex16(tail.segment))-\(JournalFormat.hex16(UInt64(tail.validEnd))).bak"
        let backupFile = try layer.open(joinPath(directory, backup), .create)
        defer { backupFile.close() }
        try backupFile.write(bytes, at: 0)
        try backupFile.sync()
        try layer.syncDirectory(directory)
        CrashPoints.hit("after-tail-backup")
        try file.truncate(to: tail.validEnd)
        try file.sync()
        return backup
    }

    /// A directory without a manifest is a new store, or one whose creation crashed before its manifest was
    /// committed (no commit can have been acknowledged then). Anything with records in it is not, and is refused.
    private func checkNothingToLose(_ files: StoreFiles) throws {
        if let (_, name) = files.checkpoints.first {
            throw refusal(
                JournalProblem(.manifest, file: JournalFormat.manifestName, offset: 0, "missing, but \(name) exists"))
        }
        for (_, name) in files.segments {
            let file = try layer.open(joinPath(directory, name), .read)
            defer { file.close() }
            let size = try file.size()
            let header = try? readSegmentHeader(file, name: name, size: size)
            if header == nil || size > header!.encoded().count {
                throw refusal(
                    JournalProblem(
                        .manifest, file: JournalFormat.manifestName, offset: 0,
                        "missing, but \(name) holds \(size) bytes"))
            }
        }
    }

    private func schemaMismatch(_ manifest: Manifest, _ files: StoreFiles) throws -> TrellisError {
        var stored: Schema?
        if let name = files.segments[manifest.lastSegment],
            let file = try? layer.open(joinPath(directory, name), .read)
        {
            defer { file.close() }
            if let size = try? file.size(), let header = try? readSegmentHeader(file, name: name, size: size) {
                stored = try? SchemaCodec.decode(header.schemaBytes, context: name)
            }
        }
        let detail =
            stored.map { SchemaCodec.differences(stored: $0, given: schema) } ?? "the stored schema is unreadable"
        return TrellisError(
            .schemaMismatch,
            "the store at \(directory) was written with a different schema (fingerprint "
                + "\(JournalFormat.hex16(manifest.fingerprint)), this one is \(JournalFormat.hex16(schema.fingerprint))): "
                + "\(detail). Migrations are not supported yet; open it with the schema it was written with")
    }

    private func refusal(_ problem: JournalProblem) -> TrellisError {
        let hint: String
        switch problem.kind {
        case .tornTail: hint = "open with recovery: .tolerateTornTail to drop it"
        default:
            hint = "the store was not opened; open with recovery: .salvage to skip the damage, or run `trellis verify`"
        }
        return TrellisError(.corrupt, "\(directory)/\(problem) (\(hint))")
    }
}

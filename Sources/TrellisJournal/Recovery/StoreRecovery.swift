import TrellisCore
import TrellisGraph

/// Opens an existing store directory: reads the manifest, loads the checkpoint it names, replays the journal after
/// it through `Graph.applying` (the function live commits use), and applies the recovery policy to any damage.
///
/// The rules (see `journal-format.md`): a torn tail of the last segment is dropped (and backed up) unless the policy
/// is `.strict`, and so is an unacknowledged hole under `.pointInTime` and `.salvage`; rot in the last record and a journal shorter than the manifest's durable sequence are damage; damage followed by valid records, damage in an earlier segment, a sequence gap, a missing segment,
/// or a damaged manifest or checkpoint refuses the open with `.corrupt`, naming file, offset and class, unless the
/// policy is `.salvage`, which skips what it must and asks for a rewrite.
package struct StoreRecovery {
    /// What recovery hands to the journal writer.
    package struct Recovered {
        package var graph: Graph
        package var manifest: Manifest
        package var tail: JournalWalk.Tail
        package var report: RecoveryReport
        var journalBytes: Int
        package var segmentBytes: [UInt64: Int]
        /// Salvage skipped damage: the store must be rewritten (compacted) before it is trusted again.
        package var needsRewrite: Bool
        package var files: StoreFiles
    }

    let layer: any FileLayer
    let directory: String
    let policy: StoreOptions.Recovery
    let tailBackupDirectory: String?
    let readOnly: Bool

    /// The recovered state, or nil when the directory holds no store yet.
    package func run() throws -> Recovered? {
        let files = try StoreFiles.list(layer, directory)
        guard files.hasManifestFile else {
            try checkNothingToLose(files)
            return nil
        }
        guard let manifest = files.manifest else {
            throw refusal(
                JournalProblem(.manifest, file: JournalFormat.manifestName, offset: 0, files.manifestProblem ?? "?"))
        }

        var report = RecoveryReport()
        report.damagedFiles = files.damaged
        // The store is read with the schemas it was written with: the checkpoint's, then each segment's (a migration
        // record changes it). The caller reconciles the result with the schema it was given.
        var graph: Graph?
        if manifest.checkpointSequence > 0 {
            let name = JournalFormat.checkpointName(manifest.checkpointSequence)
            guard files.checkpoints[manifest.checkpointSequence] != nil else {
                throw refusal(
                    JournalProblem(.missingFile, file: name, offset: 0, "the manifest names it; it is not there"))
            }
            let file = try layer.open(joinPath(directory, name), .read)
            defer { file.close() }
            do {
                graph = try Checkpoint.load(
                    file, name: name, schema: nil, manifestBytes: manifest.checkpointBytes)
            } catch let problem as JournalProblem {
                throw refusal(problem)
            }
            report.checkpointSequence = manifest.checkpointSequence
        }

        // Without a checkpoint, the store starts with the first segment's schema (its first record may be a
        // migration away from it).
        // A header that does not read is left to the walk, which reports it with its class; an I/O error fails the open.
        var firstSchema: Schema?
        if graph == nil, let name = files.segments[manifest.firstSegment] {
            let file = try layer.open(joinPath(directory, name), .read)
            defer { file.close() }
            do {
                let header = try readSegmentHeader(file, name: name, size: try file.size())
                firstSchema = try SchemaCodec.decode(header.schemaBytes, context: name)
            } catch let error as TrellisError where error.code == .corrupt {}
        }
        var segmentSchemas: [String: Schema] = [:]
        func segmentSchema(_ record: JournalWalk.Record) throws -> Schema {
            if let known = segmentSchemas[record.file] { return known }
            let decoded = try SchemaCodec.decode(record.header.schemaBytes, context: record.file)
            segmentSchemas[record.file] = decoded
            return decoded
        }
        // A journal long next to its checkpoint (or with none) replays onto a graph without indexes: inserts go
        // straight into the leaves (`ColumnarInserts`), nothing maintains an index record by record, and each index
        // is built once at the end (and before a migration record, which needs them), as a checkpoint loads them.
        // Records apply to the checkpoint's indexes until their payloads add up to a fraction of its size, so a
        // short journal after a big checkpoint never rebuilds them. Salvage goes on from the graph before a record
        // that does not fit, so it always takes the plain path.
        var replayedBytes = 0
        let checkpointBytes = manifest.checkpointSequence > 0 ? Int(clamping: manifest.checkpointBytes) : 0
        var deferIndexes: Bool { policy != .salvage && replayedBytes * Self.deferredIndexFraction >= checkpointBytes }
        // The schema with indexes while the graph replays without them.
        var indexedSchema: Schema?
        func dropIndexes() {
            guard deferIndexes, indexedSchema == nil, let current = graph else { return }
            indexedSchema = current.schema
            graph = current.withoutIndexes()
        }
        func buildIndexes() {
            guard let schema = indexedSchema, let current = graph else { return }
            indexedSchema = nil
            graph = nil
            graph = current.rebuildingIndexes(schema)
        }
        dropIndexes()
        let walker = JournalWalk(
            layer: layer, directory: directory, manifest: manifest, files: files,
            continueAfterDamage: policy == .salvage)
        let outcome = try walker.walk(after: manifest.checkpointSequence) { record in
            let sequence = record.frame.header.sequence
            let context = "\(record.file) record \(sequence) at offset \(record.frame.offset)"
            do {
                let written = try segmentSchema(record)
                if graph == nil {
                    graph = Graph(schema: firstSchema ?? written)
                    dropIndexes()
                }
                let payload = try record.frame.payload(file: record.file)
                replayedBytes += payload.count
                if record.frame.header.type == RecordType.migration.rawValue {
                    buildIndexes()
                    let base = graph!.schema
                    let migration = try MigrationRecord.decode(payload, base: base, context: context)
                    guard migration.from == base.fingerprint, migration.to == written.fingerprint,
                        migration.stages.last?.schema.fingerprint == written.fingerprint
                    else {
                        return JournalProblem(
                            .schema, file: record.file, offset: record.frame.offset,
                            "a migration from schema \(JournalFormat.hex16(migration.from)) to "
                                + "\(JournalFormat.hex16(migration.to)) where the store's schema is "
                                + "\(JournalFormat.hex16(base.fingerprint)) and the segment's "
                                + "\(JournalFormat.hex16(written.fingerprint))")
                    }
                    graph = try migration.apply(to: graph!, sequence: sequence)
                    dropIndexes()
                    return nil
                }
                guard written.fingerprint == graph!.schema.fingerprint else {
                    return JournalProblem(
                        .schema, file: record.file, offset: 40,
                        "written with schema \(JournalFormat.hex16(written.fingerprint)) where the store's schema is "
                            + "\(JournalFormat.hex16(graph!.schema.fingerprint)) and no migration record leads there")
                }
                dropIndexes()
                let changes: ChangeSet
                if indexedSchema != nil {
                    changes = try ChangeSetCodec.decodeRecord(
                        payload, schema: graph!.schema, context: context, version: record.header.version,
                        inserts: { (r: inout ByteReader) throws(TrellisError) in
                            try ColumnarInserts.apply(&r, to: &graph!)
                        }
                    ).changes
                } else {
                    changes = try ChangeSetCodec.decodeRecord(
                        payload, schema: graph!.schema, context: context, version: record.header.version
                    ).changes
                }
                if policy == .salvage {
                    // Salvage goes on after a record that does not fit, from the graph before it.
                    graph = try graph!.applying(changes, sequence: sequence)
                } else {
                    // Any damage refuses the open, so the graph is never used after a failed apply: apply in place.
                    try graph!.apply(changes, sequence: sequence)
                }
                return nil
            } catch let error as TrellisError where error.code == .corrupt {
                return JournalProblem(.decode, file: record.file, offset: record.frame.offset, error.message)
            }
        }
        buildIndexes()
        // An unacknowledged hole is dropped like a torn tail by the policies that go at least as far as
        // `.pointInTime` (salvage keeps what recovery may keep, and the records after such a hole were never
        // acknowledged and were written on top of the missing ones).
        let dropsHole = policy == .pointInTime || policy == .salvage
        let torn = outcome.problems.last.flatMap {
            $0.kind == .tornTail || ($0.kind == .unacknowledgedHole && dropsHole) ? $0 : nil
        }
        let damage = outcome.problems.filter { $0.kind != .tornTail && !($0.kind == .unacknowledgedHole && dropsHole) }
        switch policy {
        case .strict:
            if let first = outcome.problems.first { throw refusal(first) }
        case .tolerateTornTail, .pointInTime:
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
            do {
                let file = try layer.open(joinPath(directory, name), .read)
                defer { file.close() }
                segmentBytes[id] = try file.size()
            } catch  where readOnly {
                // The walk has read these segments; a writer compacting meanwhile may have removed them since, and
                // only a writer needs their sizes.
                continue
            }
        }
        // The policy counts record bytes: the last segment's file holds space reserved after its records (zeros).
        if segmentBytes[tail.segment] != nil { segmentBytes[tail.segment] = tail.validEnd }
        if let torn {
            if torn.kind == .unacknowledgedHole {
                report.hole = torn
                report.droppedRecords = outcome.holeRecords
            } else {
                report.tornTail = torn
            }
            report.droppedBytes = tail.size - tail.validEnd
            if !readOnly {
                report.tailBackup = try dropTornTail(tail)
                journalBytes -= report.droppedBytes
                tail.size = tail.validEnd
            }
        }
        // The last segment's header holds the newest schema: its defaults and the store's migration history.
        let last: Schema
        do {
            last = try SchemaCodec.decode(tail.header.schemaBytes, context: tail.name)
        } catch let error as TrellisError where error.code == .corrupt {
            throw refusal(JournalProblem(.header, file: tail.name, offset: 56, error.message))
        }
        var recovered = graph ?? Graph(schema: last)
        if recovered.schema.fingerprint == last.fingerprint {
            recovered = recovered.withSchema(last)
        } else if policy != .salvage {
            throw refusal(
                JournalProblem(
                    .schema, file: tail.name, offset: 40,
                    "the last segment holds schema \(JournalFormat.hex16(last.fingerprint)) where the store's is "
                        + JournalFormat.hex16(recovered.schema.fingerprint)))
        }
        report.replayedRecords = outcome.records
        report.lastSequence = recovered.sequence
        var kept = manifest
        if !readOnly && recovered.sequence < kept.durableSequence {
            // Only salvage gets here (a vanished tail refuses otherwise): it keeps what is there, and the manifest
            // stops claiming the records that are not, before anything is appended after them.
            kept.durableSequence = recovered.sequence
            kept.generation += 1
            try layer.writeAtomically(
                kept.encoded(), to: joinPath(directory, JournalFormat.manifestName), directory: directory)
        }
        return Recovered(
            graph: recovered, manifest: kept, tail: tail, report: report, journalBytes: journalBytes,
            segmentBytes: segmentBytes, needsRewrite: !damage.isEmpty, files: files)
    }

    /// Records replay without indexes once their payloads add up to 1/`deferredIndexFraction` of the checkpoint's
    /// bytes (see `run`): building an index from the rows costs about what loading it does, while maintaining it
    /// costs every record's entries.
    static let deferredIndexFraction = 4

    /// Copies the bytes after the last valid record to a backup file (synced), then truncates the segment there and
    /// syncs it. Returns the backup's name, or its path when it is in another directory (`tailBackupDirectory`).
    private func dropTornTail(_ tail: JournalWalk.Tail) throws -> String {
        let path = joinPath(directory, tail.name)
        let file = try layer.open(path, .readWrite)
        defer { file.close() }
        let bytes = try file.read(at: tail.validEnd, count: tail.size - tail.validEnd)
        let backup = "torn-\(JournalFormat.hex16(tail.segment))-\(JournalFormat.hex16(UInt64(tail.validEnd))).bak"
        let backupDirectory = tailBackupDirectory ?? directory
        let backupPath = joinPath(backupDirectory, backup)
        let backupFile = try layer.open(backupPath, .create)
        do {
            try backupFile.write(bytes, at: 0)
            try backupFile.sync()
            backupFile.close()
            try layer.syncDirectory(backupDirectory)
        } catch {
            // Nothing was changed: no partial backup is left, and the store still opens read-only (which needs no
            // space) or once there is room for the backup.
            backupFile.close()
            let failed = layer.removingTemporary(backupPath, after: error)
            let cause = (failed as? TrellisError)?.message ?? "\(failed)"
            throw TrellisError(
                (failed as? TrellisError)?.code ?? .io,
                "\(directory): the torn tail of \(tail.name) (\(bytes.count) bytes from offset \(tail.validEnd)) must be "
                    + "backed up before a writable open drops it, and the backup failed: \(cause). Nothing was changed; "
                    + "open the store read-only (StoreOptions(readOnly: true)), or free space and open it again, or "
                    + "back it up elsewhere (StoreOptions(tailBackupDirectory:) on another disk)")
        }
        CrashPoints.hit("after-tail-backup")
        try file.truncate(to: tail.validEnd)
        try file.sync()
        return tailBackupDirectory == nil ? backup : backupPath
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
            var header: FileHeader?
            do {
                header = try readSegmentHeader(file, name: name, size: size)
            } catch let error as TrellisError where error.code == .corrupt {}
            if header == nil || size > header!.encoded().count {
                throw refusal(
                    JournalProblem(
                        .manifest, file: JournalFormat.manifestName, offset: 0,
                        "missing, but \(name) holds \(size) bytes"))
            }
        }
    }

    private func refusal(_ problem: JournalProblem) -> TrellisError {
        let hint: String
        switch problem.kind {
        case .tornTail: hint = "open with recovery: .tolerateTornTail to drop it"
        case .unacknowledgedHole:
            hint =
                "no record after it was acknowledged; open with recovery: .pointInTime to keep the records before "
                + "it and drop the rest (backed up)"
        case .rot, .vanishedTail:
            hint =
                "records that were durable are damaged or gone; open with recovery: .salvage to keep the rest "
                + "(or run `trellis verify`)"
        default:
            hint = "the store was not opened; open with recovery: .salvage to skip the damage, or run `trellis verify`"
        }
        return TrellisError(.corrupt, "\(directory)/\(problem) (\(hint))")
    }

    /// `tailBackupDirectory`: where a dropped tail's backup goes (nil: `directory`).
    package init(
        layer: any FileLayer, directory: String, policy: StoreOptions.Recovery, readOnly: Bool,
        tailBackupDirectory: String? = nil
    ) {
        self.layer = layer
        self.directory = directory
        self.tailBackupDirectory = tailBackupDirectory
        self.policy = policy
        self.readOnly = readOnly
    }
}

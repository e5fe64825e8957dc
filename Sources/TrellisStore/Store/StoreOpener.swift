import Foundation
import TrellisCore
import TrellisGraph
import TrellisJournal

/// Opens a store directory: creates it (owner-only) or recovers it, takes the writer lock, cleans up leftovers.
enum StoreOpener {
    /// Opens (or creates) the store and brings it to `plan`'s last schema: a store with the same structure opens as
    /// it is (with the new defaults), a different one is migrated in one atomic step (a new segment whose first
    /// record is the migration, then the manifest that names it) or refused with nothing changed.
    static func open(directory: String, plan: ResolvedMigrationPlan, options: StoreOptions) throws -> OpenedStore {
        let layer = options.fileLayer
        if options.follow { return try openFollower(directory: directory, plan: plan, layer: layer) }
        if options.readOnly {
            guard layer.exists(directory).isDirectory else {
                throw TrellisError(.io, "there is no store at \(directory) to open read-only")
            }
            let recovered = try readWithoutLock(layer: layer, directory: directory, options: options)
            // A read-only open migrates in memory only: the files stay as they are, and so does the sequence number
            // (the migration is no commit on disk).
            var graph = try SchemaMigrator.run(recovered.graph, plan: plan).graph
            graph.sequence = recovered.graph.sequence
            return OpenedStore(graph: graph, journal: nil, report: recovered.report)
        }
        try layer.createDirectory(directory)
        let lock = try layer.lockExclusively(joinPath(directory, JournalFormat.lockName))
        do {
            let recovery = StoreRecovery(
                layer: layer, directory: directory, policy: options.recovery, readOnly: false,
                tailBackupDirectory: options.tailBackupDirectory?.path)
            if let recovered = try recovery.run() {
                // Planned and checked before anything is written: a refused migration leaves the files as they were.
                let migrated = try SchemaMigrator.run(recovered.graph, plan: plan)
                var segment = try OpenSegment.reopen(recovered.tail, layer: layer, directory: directory)
                // What recovery read may not all be durable: a writer that died, or whose directory sync failed,
                // can leave records and renames (a new manifest) in the page cache only. Make them durable before
                // anything is acknowledged on top of them, or shown to readers. After a failed sync the kernel may
                // have marked the tail's pages clean, so a sync alone would not write them: the records past the
                // durable sequence are written again first (journal-format.md, Recovery).
                var report = recovered.report
                do {
                    report.rewrittenBytes = try segment.rewriteUnconfirmed(recovered.tail)
                    try segment.file.sync()
                    try layer.syncDirectory(directory)
                } catch {
                    segment.file.close()
                    throw error
                }
                var manifest = recovered.manifest
                var segmentBytes = recovered.segmentBytes
                if let record = migrated.record {
                    segment.file.close()
                    (segment, manifest) = try commitMigration(
                        record, graph: migrated.graph, manifest: manifest, options: options, directory: directory)
                    segmentBytes[segment.id] = segment.end
                }
                removeLeftovers(recovered.files.unreferenced(by: manifest), layer, directory, &report)
                let journal = Journal(
                    layer: layer, directory: directory, schema: migrated.graph.schema, options: options, lock: lock,
                    segment: segment, graph: migrated.graph, manifest: manifest, segmentBytes: segmentBytes,
                    history: recovered.files.history)
                if recovered.needsRewrite {
                    // Salvage skipped damage: the store rewrites itself as a checkpoint before it serves, keeping
                    // what it replaces as `*.damaged` (linked and synced before the new manifest commits).
                    do {
                        let kept = try journal.rewriteAfterSalvage()
                        report.damagedFiles = Array(Set(report.damagedFiles + kept)).sorted()
                    } catch {
                        journal.closeUnstarted()
                        throw error
                    }
                }
                return OpenedStore(graph: migrated.graph, journal: journal, report: report)
            }
            return try create(
                directory: directory, schema: plan.creationSchema, options: options, layer: layer, lock: lock)
        } catch {
            lock.release()
            throw error
        }
    }

    /// A follower: the records through the writer's durable mark, shown in the application's schema. When the store
    /// holds another structure that the plan migrates from, the follower shows it migrated in memory (as a read-only
    /// open does) until the writer migrates it on disk; a schema the plan refuses is refused as an open refuses it.
    private static func openFollower(
        directory: String, plan: ResolvedMigrationPlan, layer: any FileLayer
    ) throws -> OpenedStore {
        guard layer.exists(directory).isDirectory else {
            throw TrellisError(.io, "there is no store at \(directory) to follow")
        }
        let follower = try JournalFollower.open(layer: layer, directory: directory) { stored in
            let migrated = try SchemaMigrator.run(stored, plan: plan)
            var graph = migrated.graph
            graph.sequence = stored.sequence
            return (graph, migrated.record != nil)
        }
        let graph = follower.graph
        var report = RecoveryReport()
        report.checkpointSequence = follower.checkpointSequence
        report.lastSequence = graph.sequence
        return OpenedStore(graph: graph, journal: nil, report: report, follower: follower)
    }

    /// A new store: segment 1, then the manifest that names it (the commit point of creation). Leftovers of a
    /// creation that crashed before its manifest hold no records (recovery checked) and are removed first.
    private static func create(
        directory: String, schema: Schema, options: StoreOptions, layer: any FileLayer, lock: any LayerLock
    ) throws -> OpenedStore {
        let files = try StoreFiles.list(layer, directory)
        var report = RecoveryReport()
        report.created = true
        removeLeftovers(
            files.temporaries + Array(files.segments.values) + Array(files.checkpoints.values)
                + (files.history == nil ? [] : [HistoryFile.name]), layer, directory, &report)
        let segment = try OpenSegment.create(
            id: 1, firstSequence: 1, schema: schema, layer: layer, directory: directory)
        let manifest = Manifest(
            generation: 1, fingerprint: schema.fingerprint, checkpointSequence: 0, checkpointBytes: 0, firstSegment: 1,
            lastSegment: 1, durableSequence: 0)
        do {
            try layer.writeAtomically(
                manifest.encoded(), to: joinPath(directory, JournalFormat.manifestName), directory: directory)
        } catch {
            segment.file.close()
            throw error
        }
        let graph = Graph(schema: schema)
        let journal = Journal(
            layer: layer, directory: directory, schema: schema, options: options, lock: lock, segment: segment,
            graph: graph, manifest: manifest, segmentBytes: [1: segment.end])
        return OpenedStore(graph: graph, journal: journal, report: report)
    }

    /// Commits a migration: a new segment whose header holds the new schema and whose first record is the migration
    /// (written whole under a temporary name, synced, renamed, the directory synced), then the manifest that names it.
    /// A crash before the manifest's rename leaves the old store (the new segment is unreferenced and removed by the
    /// next open); after it, the new one.
    static func commitMigration(
        _ record: MigrationRecord, graph: Graph, manifest old: Manifest, options: StoreOptions, directory: String
    ) throws -> (OpenSegment, Manifest) {
        let layer = options.fileLayer
        let id = old.lastSegment + 1
        let salt = UInt64.random(in: 1...UInt64.max)
        let header = FileHeader(
            magic: JournalFormat.segmentMagic, id: id, sequence: graph.sequence, salt: salt,
            fingerprint: graph.schema.fingerprint, schemaBytes: SchemaCodec.encode(graph.schema))
        let headerBytes = header.encoded()
        let frame = RecordFrame.encode(
            type: .migration, payload: record.encoded(), sequence: graph.sequence,
            time: RecordFrame.microseconds(graph.schema.history.last?.date ?? Date()), salt: salt,
            compressionLevel: Int32(options.compressionLevel), watermark: old.durableSequence)
        let path = joinPath(directory, JournalFormat.segmentName(id))
        try layer.writeAtomically(headerBytes + frame, to: path, directory: directory)
        CrashPoints.hit("after-migration-segment")
        let manifest = Manifest(
            generation: old.generation + 1, fingerprint: graph.schema.fingerprint,
            checkpointSequence: old.checkpointSequence, checkpointBytes: old.checkpointBytes,
            firstSegment: old.firstSegment, lastSegment: id, durableSequence: graph.sequence)
        try layer.writeAtomically(
            manifest.encoded(), to: joinPath(directory, JournalFormat.manifestName), directory: directory)
        CrashPoints.hit("after-migration-manifest")
        let file = try layer.open(path, .readWrite)
        let end = headerBytes.count + frame.count
        return (
            OpenSegment(id: id, file: file, salt: salt, end: end, headerSize: headerBytes.count, allocated: end),
            manifest
        )
    }

    /// Removes files no manifest references. A failure is not the open's (the file stays unreferenced, and the next
    /// open tries again), but it is reported: in `report.warnings`, which `Store.warnings` shows.
    private static func removeLeftovers(
        _ names: [String], _ layer: any FileLayer, _ directory: String, _ report: inout RecoveryReport
    ) {
        guard !names.isEmpty else { return }
        for name in names.sorted() {
            do {
                try layer.remove(joinPath(directory, name))
                report.removedFiles.append(name)
            } catch {
                report.warnings.append("could not remove the leftover \(name): \(describe(error))")
            }
        }
        do {
            try layer.syncDirectory(directory)
        } catch {
            report.warnings.append(
                "could not sync \(directory) after removing leftovers (a crash may bring them back): \(describe(error))"
            )
        }
    }

    private static func describe(_ error: any Error) -> String { (error as? TrellisError)?.message ?? "\(error)" }

    /// A read-only open takes no lock, so a writer may compact meanwhile and delete a segment the reader was about to
    /// read. When reading fails and the manifest or the directory's files changed under it, the reader starts again;
    /// damage that stays put is reported as it is.
    static func readWithoutLock(
        layer: any FileLayer, directory: String, options: StoreOptions
    ) throws -> StoreRecovery.Recovered {
        let manifestPath = joinPath(directory, JournalFormat.manifestName)
        func state() -> ([UInt8]?, [String]?) {
            (try? layer.readWhole(manifestPath, limit: 4096), try? layer.list(directory).sorted())
        }
        var attempt = 0
        while true {
            let before = state()
            do {
                let recovery = StoreRecovery(
                    layer: layer, directory: directory, policy: options.recovery, readOnly: true)
                guard let recovered = try recovery.run() else {
                    throw TrellisError(.io, "\(directory) holds no store (no \(JournalFormat.manifestName))")
                }
                return recovered
            } catch let error as TrellisError {
                attempt += 1
                let after = state()
                guard attempt < 20, before.0 != after.0 || before.1 != after.1 else { throw error }
            }
        }
    }
}

extension Store {
    /// Commits, in the closed store in `directory`, a migration record another store committed (a replica applying
    /// its stream): the store is recovered, the migration applied to it as recovery applies one, and committed as a
    /// live migration commits (a new segment whose header holds the new schema and whose first record is the
    /// migration, then the manifest). Returns the schema after it, for the store to be opened with.
    package static func commitReplicatedMigration(
        directory: URL, frame: DurableFrame, context: String, options: StoreOptions = StoreOptions()
    ) throws -> Schema {
        let layer = options.fileLayer
        let path = directory.path
        let lock = try layer.lockExclusively(joinPath(path, JournalFormat.lockName))
        defer { lock.release() }
        let recovery = StoreRecovery(
            layer: layer, directory: path, policy: options.recovery, readOnly: false, tailBackupDirectory: nil)
        guard let recovered = try recovery.run() else {
            throw TrellisError(.io, "there is no store at \(path) to migrate")
        }
        let (graph, record) = try frame.migrated(recovered.graph, context: context)
        let (segment, _) = try StoreOpener.commitMigration(
            record, graph: graph, manifest: recovered.manifest, options: options, directory: path)
        segment.file.close()
        return graph.schema
    }
}

import Foundation
import TrellisCore
import TrellisGraph

/// Reads a store directory without opening it for writing: its manifest, schema, records and problems.
///
/// It takes no lock and changes nothing, so it can run beside a live writer (a record being appended meanwhile shows
/// as a torn tail). It is what the `trellis` tool's inspect, verify, dump and history commands stand on.
///
/// ```swift
/// let reader = try JournalReader(directory: url)
/// let problems = try reader.forEachRecord { record in
///     print(record.sequence, record.time, record.changes.inserts.count)
/// }
/// print(try reader.verify().isClean)
/// ```
public struct JournalReader: Sendable {
    /// The store directory it reads.
    public let directory: URL
    let path: String
    let layer: any FileLayer

    /// A reader of the store in `directory`; nothing is read until a method asks.
    public init(directory: URL) throws {
        self.init(path: directory.path, layer: PosixFileLayer())
    }

    package init(path: String, layer: any FileLayer) {
        self.directory = URL(fileURLWithPath: path)
        self.path = path
        self.layer = layer
    }

    /// The manifest's fields: generation, schema fingerprint, checkpoint sequence and size, first and last segment.
    public struct ManifestSummary: Sendable, Equatable {
        /// The manifest's write count: one more each time it is rewritten (segment rotation, compaction, migration).
        public var generation: UInt64
        /// The fingerprint of the store's schema (`Schema.fingerprint`).
        public var fingerprint: UInt64
        /// The sequence number of the checkpoint the store opens from (0: none).
        public var checkpointSequence: UInt64
        /// The checkpoint file's size in bytes.
        public var checkpointBytes: UInt64
        /// The id of the first segment recovery replays.
        public var firstSegment: UInt64
        /// The id of the last segment, the one being appended to.
        public var lastSegment: UInt64
        /// The last record the journal held, synced, when the manifest was written (clean close, rotation,
        /// compaction, migration); a journal ending before it lost records (class `vanished tail`). 0 before format
        /// version 5.
        public var durableSequence: UInt64
    }

    /// The manifest, or a problem saying why it cannot be read.
    public func manifest() throws -> ManifestSummary {
        let files = try StoreFiles.list(layer, path)
        guard let m = files.manifest else {
            throw JournalProblem(
                .manifest, file: JournalFormat.manifestName, offset: 0, files.manifestProblem ?? "missing")
        }
        return ManifestSummary(
            generation: m.generation, fingerprint: m.fingerprint, checkpointSequence: m.checkpointSequence,
            checkpointBytes: m.checkpointBytes, firstSegment: m.firstSegment, lastSegment: m.lastSegment,
            durableSequence: m.durableSequence)
    }

    /// The schema the store was written with, from the newest readable header: of the segments the manifest names,
    /// then of the checkpoints, then of other segments. A segment the manifest does not name (a migration that
    /// crashed before its manifest was written leaves one) may hold a schema the store never had.
    public func schema() throws -> Schema {
        let files = try StoreFiles.list(layer, path)
        let live = { (id: UInt64) in files.manifest.map { ($0.firstSegment...$0.lastSegment).contains(id) } ?? true }
        let segments = files.segments.sorted { $0.key > $1.key }
        func segmentSchema(_ name: String) throws -> Schema? {
            let file = try layer.open(joinPath(path, name), .read)
            defer { file.close() }
            guard let header = try? readSegmentHeader(file, name: name, size: try file.size()) else { return nil }
            return try SchemaCodec.decode(header.schemaBytes, context: name)
        }
        for (id, name) in segments where live(id) {
            if let schema = try segmentSchema(name) { return schema }
        }
        for (_, name) in files.checkpoints.sorted(by: { $0.key > $1.key }) {
            let file = try layer.open(joinPath(path, name), .read)
            defer { file.close() }
            if let header = try? Checkpoint.header(file, name: name, size: try file.size()) {
                return try SchemaCodec.decode(header.schemaBytes, context: name)
            }
        }
        for (id, name) in segments where !live(id) {
            if let schema = try segmentSchema(name) { return schema }
        }
        throw TrellisError(.corrupt, "\(path): no readable segment or checkpoint header to read the schema from")
    }

    /// Calls `body` with every valid record of the journal in order, skipping damage, and returns the problems met
    /// on the way (torn tail, checksum, length, sequence gap, salt, unknown type, missing file…). Each record is
    /// decoded with the schema it was written with (its segment's), migration records included (`isMigration`).
    @discardableResult
    public func forEachRecord(_ body: (JournalRecord) throws -> Void) throws -> [JournalProblem] {
        let files = try StoreFiles.list(layer, path)
        let manifest = try files.manifest ?? inferredManifest(files, try schema())
        return try walkRecords(files, manifest) { record in
            try body(record)
            return nil
        }.problems
    }

    /// The migration records the journal holds (those after the checkpoint; older ones were compacted into it and
    /// live on only in `schema().history`), oldest first. Reads only segment headers and each segment's first record,
    /// where a migration always is; what does not read is left out (`verify()` reports it).
    public func migrations() throws -> [JournalMigration] {
        let files = try StoreFiles.list(layer, path)
        let manifest = try files.manifest ?? inferredManifest(files, try schema())
        var before = try? startSchema(files, manifest)
        var out: [JournalMigration] = []
        for id in files.segments.keys.sorted() where (manifest.firstSegment...manifest.lastSegment).contains(id) {
            guard let name = files.segments[id], let file = try? layer.open(joinPath(path, name), .read) else {
                continue
            }
            defer { file.close() }
            guard let size = try? file.size(), let header = try? readSegmentHeader(file, name: name, size: size),
                let written = try? SchemaCodec.decode(header.schemaBytes, context: name)
            else { continue }
            let base = before ?? written
            before = written
            var scanner = FrameScanner(
                file, name: name, size: size, salt: header.salt, otherSalts: [], knownTypes: Self.recordTypes,
                version: header.version)
            guard case .frame(let frame)? = try? scanner.step(at: header.encoded().count),
                frame.header.type == RecordType.migration.rawValue,
                frame.header.sequence > manifest.checkpointSequence,
                let payload = try? frame.payload(file: name),
                let record = try? MigrationRecord.decode(payload, base: base, context: name),
                record.from == base.fingerprint, record.to == written.fingerprint
            else { continue }
            out.append(
                JournalMigration(
                    record, sequence: frame.header.sequence, time: RecordFrame.date(frame.header.time), before: base,
                    after: written, file: name, offset: frame.offset))
        }
        return out
    }

    /// Checks everything: the manifest, the checkpoint (every chunk), every record (checksum, sequence, decoding with
    /// its segment's schema, that a migration starts from the schema before it, that each record applies to the
    /// graph before it, and that the history it carries, updates' old values and deletes' values and targets, is the
    /// state it applies to), that the last segment's schema is the one the records lead to, and files the manifest does
    /// not reference.
    public func verify() throws -> JournalVerification {
        let files = try StoreFiles.list(layer, path)
        var problems: [JournalProblem] = []
        let schema: Schema
        do {
            schema = try self.schema()
        } catch let error as TrellisError where error.code == .corrupt {
            problems.append(JournalProblem(.header, file: ".", offset: 0, error.message))
            return JournalVerification(
                problems: problems, checkpointSequence: 0, records: 0, lastSequence: 0, objectCounts: [:])
        }
        let manifest: Manifest
        if let m = files.manifest {
            manifest = m
        } else {
            problems.append(
                JournalProblem(
                    .manifest, file: JournalFormat.manifestName, offset: 0, files.manifestProblem ?? "missing"))
            manifest = try inferredManifest(files, schema)
        }
        for name in files.unreferenced(by: manifest) {
            problems.append(JournalProblem(.orphanFile, file: name, offset: 0, "no manifest references it"))
        }
        var loaded: Graph?
        if manifest.checkpointSequence > 0 {
            let name = JournalFormat.checkpointName(manifest.checkpointSequence)
            if files.checkpoints[manifest.checkpointSequence] == nil {
                problems.append(JournalProblem(.missingFile, file: name, offset: 0, "the manifest names it"))
            } else {
                let file = try layer.open(joinPath(path, name), .read)
                defer { file.close() }
                do {
                    // In the schema it was written with: a migration after it is a record of the journal.
                    let result = try Checkpoint.loadReporting(
                        file, name: name, schema: nil, manifestBytes: files.manifest?.checkpointBytes)
                    loaded = result.graph
                    // Opening sorts such an index instead and loses nothing, but a right writer never stores one.
                    if result.orders.rejected > 0 {
                        problems.append(
                            JournalProblem(
                                .decode, file: name, offset: 0,
                                "\(result.orders.rejected) stored index order(s) do not sort their keys; "
                                    + "those indexes are rebuilt by sorting on open"))
                    }
                } catch let problem as JournalProblem {
                    problems.append(problem)
                }
            }
        }
        var graph = loaded ?? Graph(schema: firstSegmentSchema(files, manifest) ?? schema)
        let outcome = try walkRecords(files, manifest) { record in
            do {
                graph = try record.appliedCheckingHistory(to: graph)
            } catch let error as TrellisError where error.code == .corrupt {
                // A record that applies without its history is damaged in its history alone.
                guard (try? record.applied(to: graph)) != nil else { throw error }
                return JournalProblem(.history, file: record.file, offset: record.offset, error.message)
            }
            return nil
        }
        problems += outcome.problems
        // The last segment's header holds the newest schema; recovery refuses a store whose records lead elsewhere.
        if problems.isEmpty, let tail = outcome.tail,
            let last = try? SchemaCodec.decode(tail.header.schemaBytes, context: tail.name),
            last.fingerprint != graph.schema.fingerprint
        {
            problems.append(
                JournalProblem(
                    .schema, file: tail.name, offset: 40,
                    "the last segment holds schema \(JournalFormat.hex16(last.fingerprint)) where the records lead to "
                        + JournalFormat.hex16(graph.schema.fingerprint)))
        }
        var counts: [String: Int] = [:]
        for (e, entity) in graph.schema.entities.enumerated() { counts[entity.name] = graph.count(entity: UInt32(e)) }
        return JournalVerification(
            problems: problems, checkpointSequence: manifest.checkpointSequence, records: outcome.records,
            lastSequence: graph.sequence, objectCounts: counts)
    }

    static let recordTypes: Set<UInt8> = [RecordType.changeSet.rawValue, RecordType.migration.rawValue]

    /// Walks the journal after the checkpoint as recovery reads it, decoding each record for `body`: a commit with
    /// the schema of its segment, a migration against the schema before it (the checkpoint's, or the previous
    /// segment's), checked to lead from that schema to its segment's. A decoding failure, or an error `.corrupt`
    /// thrown by `body`, is a `.decode` problem; a record whose segment's schema no migration leads to is a `.schema`
    /// problem (once per segment: the rest of the segment is read with its schema).
    func walkRecords(
        _ files: StoreFiles, _ manifest: Manifest, startingWith start: Schema? = nil,
        _ body: (JournalRecord) throws -> JournalProblem?
    ) throws -> JournalWalk.Outcome {
        var current = start ?? (try? startSchema(files, manifest))
        var segmentSchemas: [String: Schema] = [:]
        let walker = JournalWalk(
            layer: layer, directory: path, manifest: manifest, files: files, continueAfterDamage: true)
        return try walker.walk(after: manifest.checkpointSequence) { walked in
            let frame = walked.frame
            let sequence = frame.header.sequence
            let context = "\(walked.file) record \(sequence)"
            do {
                let written: Schema
                if let known = segmentSchemas[walked.file] {
                    written = known
                } else {
                    written = try SchemaCodec.decode(walked.header.schemaBytes, context: walked.file)
                    segmentSchemas[walked.file] = written
                }
                let base = current ?? written
                current = written
                let payload = try frame.payload(file: walked.file)
                var record = JournalRecord(
                    sequence: sequence, time: RecordFrame.date(frame.header.time), changes: ChangeSet(),
                    schema: written, migration: nil, file: walked.file, offset: frame.offset,
                    storedBytes: frame.storedBytes, frameBytes: frame.extent,
                    syncedThrough: frame.header.watermark, uncompressedBytes: frame.uncompressedBytes,
                    isCompressed: frame.isCompressed, frames: frame.frameCount)
                if frame.header.type == RecordType.migration.rawValue {
                    let migration = try MigrationRecord.decode(payload, base: base, context: context)
                    guard migration.from == base.fingerprint, migration.to == written.fingerprint,
                        migration.stages.last?.schema.fingerprint == written.fingerprint
                    else {
                        return JournalProblem(
                            .schema, file: walked.file, offset: frame.offset,
                            "a migration from schema \(JournalFormat.hex16(migration.from)) to "
                                + "\(JournalFormat.hex16(migration.to)) where the store's schema is "
                                + "\(JournalFormat.hex16(base.fingerprint)) and the segment's "
                                + JournalFormat.hex16(written.fingerprint))
                    }
                    record.migrationRecord = migration
                    record.migration = JournalMigration(
                        migration, sequence: sequence, time: record.time, before: base, after: written,
                        file: walked.file, offset: frame.offset)
                } else {
                    guard base.fingerprint == written.fingerprint else {
                        return JournalProblem(
                            .schema, file: walked.file, offset: 40,
                            "written with schema \(JournalFormat.hex16(written.fingerprint)) where the store's "
                                + "schema is \(JournalFormat.hex16(base.fingerprint)) and no migration record leads "
                                + "there")
                    }
                    (record.changes, record.author) = try ChangeSetCodec.decodeRecord(
                        payload, schema: written, context: context, version: walked.header.version)
                }
                return try body(record)
            } catch let error as TrellisError where error.code == .corrupt {
                return JournalProblem(.decode, file: walked.file, offset: frame.offset, error.message)
            }
        }
    }

    /// The schema the journal after the checkpoint starts from: the checkpoint's, or without one the first live
    /// segment's (its first record may be a migration away from it), as recovery starts.
    func startSchema(_ files: StoreFiles, _ manifest: Manifest) throws -> Schema {
        if manifest.checkpointSequence > 0 {
            let name = JournalFormat.checkpointName(manifest.checkpointSequence)
            let file = try layer.open(joinPath(path, name), .read)
            defer { file.close() }
            let header = try Checkpoint.header(file, name: name, size: try file.size())
            return try SchemaCodec.decode(header.schemaBytes, context: name)
        }
        guard let schema = firstSegmentSchema(files, manifest) else {
            throw TrellisError(.corrupt, "\(path): the first segment's header does not read")
        }
        return schema
    }

    private func firstSegmentSchema(_ files: StoreFiles, _ manifest: Manifest) -> Schema? {
        guard let name = files.segments[manifest.firstSegment],
            let file = try? layer.open(joinPath(path, name), .read)
        else { return nil }
        defer { file.close() }
        guard let size = try? file.size(), let header = try? readSegmentHeader(file, name: name, size: size) else {
            return nil
        }
        return try? SchemaCodec.decode(header.schemaBytes, context: name)
    }

    /// Without a readable manifest, the segments present (lowest to highest id) and the newest checkpoint stand in.
    private func inferredManifest(_ files: StoreFiles, _ schema: Schema) throws -> Manifest {
        guard let first = files.segments.keys.min(), let last = files.segments.keys.max() else {
            throw JournalProblem(.missingFile, file: ".", offset: 0, "no segments and no readable manifest")
        }
        let checkpoint = files.checkpoints.keys.max() ?? 0
        return Manifest(
            generation: 0, fingerprint: schema.fingerprint, checkpointSequence: checkpoint, checkpointBytes: 0,
            firstSegment: first, lastSegment: last, durableSequence: 0)
    }
}

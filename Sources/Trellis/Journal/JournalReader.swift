import Foundation

/// One change-set record of the journal, decoded, with where and how it is stored.
public struct JournalRecord: Sendable {
    public var sequence: UInt64
    /// When the commit was made (microsecond precision).
    public var time: Date
    public var changes: ChangeSet
    /// The segment file's name within the store directory.
    public var file: String
    /// The byte offset of the record's frame in `file`.
    public var offset: Int
    /// The payload's size as stored (compressed or not) and before compression.
    public var storedBytes: Int
    public var uncompressedBytes: Int
    public var isCompressed: Bool
}

/// What `JournalReader.verify()` found.
public struct JournalVerification: Sendable {
    /// Every problem, classified, with file and offset; empty for a healthy store.
    public var problems: [JournalProblem]
    /// The sequence number of the checkpoint (0: none).
    public var checkpointSequence: UInt64
    /// Change-set records that checked out and applied.
    public var records: Int
    /// The last sequence number a recovery would reach (with `.salvage`, when there are problems).
    public var lastSequence: UInt64
    /// The objects per entity name of the recovered graph.
    public var objectCounts: [String: Int]
    public var isClean: Bool { problems.isEmpty }
}

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
    public let directory: URL
    let path: String
    let layer: any FileLayer

    public init(directory: URL) throws {
        self.init(path: directory.path, layer: PosixFileLayer())
    }

    init(path: String, layer: any FileLayer) {
        self.directory = URL(fileURLWithPath: path)
        self.path = path
        self.layer = layer
    }

    /// The manifest's fields: generation, schema fingerprint, checkpoint sequence and size, first and last segment.
    public struct ManifestSummary: Sendable, Equatable {
        public var generation: UInt64
        public var fingerprint: UInt64
        public var checkpointSequence: UInt64
        public var checkpointBytes: UInt64
        public var firstSegment: UInt64
        public var lastSegment: UInt64
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
            checkpointBytes: m.checkpointBytes, firstSegment: m.firstSegment, lastSegment: m.lastSegment)
    }

    /// The schema the store was written with, from the newest readable segment or checkpoint header. With a readable
    /// manifest, segments after its last one are not the store's (a migration that crashed before its manifest switch
    /// leaves one holding a schema the store never had) and are passed over.
    public func schema() throws -> Schema {
        let files = try StoreFiles.list(layer, path)
        let last = files.manifest?.lastSegment ?? .max
        for (id, name) in files.segments.sorted(by: { $0.key > $1.key }) where id <= last {
            let file = try layer.open(joinPath(path, name), .read)
            defer { file.close() }
            if let header = try? readSegmentHeader(file, name: name, size: try file.size()) {
                return try SchemaCodec.decode(header.schemaBytes, context: name)
            }
        }
        for (_, name) in files.checkpoints.sorted(by: { $0.key > $1.key }) {
            let file = try layer.open(joinPath(path, name), .read)
            defer { file.close() }
            if let header = try? Checkpoint.header(file, name: name, size: try file.size()) {
                return try SchemaCodec.decode(header.schemaBytes, context: name)
            }
        }
        throw TrellisError(.corrupt, "\(path): no readable segment or checkpoint header to read the schema from")
    }

    /// Calls `body` with every valid record of the journal in order, skipping damage, and returns the problems met
    /// on the way (torn tail, checksum, length, sequence gap, salt, unknown type, missing file…).
    @discardableResult
    public func forEachRecord(_ body: (JournalRecord) throws -> Void) throws -> [JournalProblem] {
        let files = try StoreFiles.list(layer, path)
        let schema = try self.schema()
        let manifest = try files.manifest ?? inferredManifest(files, schema)
        let walker = JournalWalk(
            layer: layer, directory: path, manifest: manifest, files: files, continueAfterDamage: true)
        let outcome = try walker.walk(after: manifest.checkpointSequence) { record in
            let frame = record.frame
            do {
                let payload = try frame.payload(file: record.file)
                let changes = try ChangeSetCodec.decode(
                    payload, schema: schema, context: "\(record.file) record \(frame.header.sequence)")
                try body(
                    JournalRecord(
                        sequence: frame.header.sequence, time: RecordFrame.date(frame.header.time), changes: changes,
                        file: record.file, offset: frame.offset, storedBytes: frame.header.storedLength,
                        uncompressedBytes: frame.header.uncompressedLength, isCompressed: frame.isCompressed))
                return nil
            } catch let error as TrellisError where error.code == .corrupt {
                return JournalProblem(.decode, file: record.file, offset: frame.offset, error.message)
            }
        }
        return outcome.problems
    }

    /// Checks everything: the manifest, the checkpoint (every chunk), every record (checksum, sequence, decoding,
    /// and that it applies to the graph before it), and files the manifest does not reference.
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
        // As recovery does: the checkpoint and each segment are read with the schema they were written with, and a
        // migration record moves the graph from one to the next.
        var graph: Graph?
        if manifest.checkpointSequence > 0 {
            let name = JournalFormat.checkpointName(manifest.checkpointSequence)
            if files.checkpoints[manifest.checkpointSequence] == nil {
                problems.append(JournalProblem(.missingFile, file: name, offset: 0, "the manifest names it"))
            } else {
                let file = try layer.open(joinPath(path, name), .read)
                defer { file.close() }
                do {
                    let loaded = try Checkpoint.loadReporting(file, name: name, schema: nil)
                    graph = loaded.graph
                    // Opening sorts such an index instead and loses nothing, but a right writer never stores one.
                    if loaded.orders.rejected > 0 {
                        problems.append(
                            JournalProblem(
                                .decode, file: name, offset: 0,
                                "\(loaded.orders.rejected) stored index order(s) do not sort their keys; "
                                    + "those indexes are rebuilt by sorting on open"))
                    }
                } catch let problem as JournalProblem {
                    problems.append(problem)
                }
            }
        }
        let walker = JournalWalk(
            layer: layer, directory: path, manifest: manifest, files: files, continueAfterDamage: true)
        var segmentSchemas: [String: Schema] = [:]
        let outcome = try walker.walk(after: manifest.checkpointSequence) { record in
            let sequence = record.frame.header.sequence
            let context = "\(record.file) record \(sequence)"
            do {
                let written: Schema
                if let known = segmentSchemas[record.file] {
                    written = known
                } else {
                    written = try SchemaCodec.decode(record.header.schemaBytes, context: record.file)
                    segmentSchemas[record.file] = written
                }
                let before = graph ?? Graph(schema: firstSegmentSchema(files, manifest) ?? written)
                let payload = try record.frame.payload(file: record.file)
                if record.frame.header.type == RecordType.migration.rawValue {
                    let migration = try MigrationRecord.decode(payload, base: before.schema, context: context)
                    guard migration.from == before.schema.fingerprint, migration.to == written.fingerprint else {
                        return JournalProblem(
                            .schema, file: record.file, offset: record.frame.offset,
                            "a migration from schema \(JournalFormat.hex16(migration.from)) to "
                                + "\(JournalFormat.hex16(migration.to)) where the store's schema is "
                                + "\(JournalFormat.hex16(before.schema.fingerprint)) and the segment's "
                                + "\(JournalFormat.hex16(written.fingerprint))")
                    }
                    graph = try migration.apply(to: before, sequence: sequence)
                    return nil
                }
                guard written.fingerprint == before.schema.fingerprint else {
                    return JournalProblem(
                        .schema, file: record.file, offset: 40,
                        "written with schema \(JournalFormat.hex16(written.fingerprint)) where the store's schema is "
                            + "\(JournalFormat.hex16(before.schema.fingerprint)) and no migration record leads there")
                }
                let changes = try ChangeSetCodec.decode(payload, schema: before.schema, context: context)
                graph = try before.applying(changes, sequence: sequence)
                return nil
            } catch let error as TrellisError where error.code == .corrupt {
                return JournalProblem(.decode, file: record.file, offset: record.frame.offset, error.message)
            }
        }
        problems += outcome.problems
        let final = graph ?? Graph(schema: schema)
        var counts: [String: Int] = [:]
        for (e, entity) in final.schema.entities.enumerated() { counts[entity.name] = final.count(entity: UInt32(e)) }
        return JournalVerification(
            problems: problems, checkpointSequence: manifest.checkpointSequence, records: outcome.records,
            lastSequence: final.sequence, objectCounts: counts)
    }

    /// The schema in the header of the manifest's first segment: where a store without a checkpoint starts (its
    /// first record may be a migration away from it). Nil when that header cannot be read.
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
            firstSegment: first, lastSegment: last)
    }
}

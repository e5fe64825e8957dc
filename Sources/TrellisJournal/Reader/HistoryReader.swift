import Foundation
import TrellisCore
import TrellisGraph

/// Reads a store's retained history from its files: the records after a sequence number, and the graph as it was
/// at any retained sequence number. Takes no lock and writes nothing, so it runs beside the writer (which appends
/// and compacts meanwhile) and in other processes.
package struct HistoryReader: Sendable {
    let layer: any FileLayer
    let directory: String

    package init(layer: any FileLayer, directory: String) {
        self.layer = layer
        self.directory = directory
    }

    /// A reader of the store in `directory` through the operating system's files.
    package init(directory: String) { self.init(layer: PosixFileLayer(), directory: directory) }

    /// What the files retain: the bases history can start from, oldest first (the manifest's own last), and the
    /// first sequence number whose record is retained.
    package struct Retained: Sendable {
        package var bases: [HistoryFile.Base]
        package var history: HistoryFile?
        var manifest: Manifest
        /// The first retained record: the oldest base's checkpoint + 1.
        package var first: UInt64 { bases[0].checkpoint + 1 }
        package var checkpointSequence: UInt64 { manifest.checkpointSequence }
    }

    package func retained() throws -> Retained {
        try retained(try StoreFiles.list(layer, directory))
    }

    func retained(_ files: StoreFiles) throws -> Retained {
        guard let manifest = files.manifest else {
            throw TrellisError(
                .corrupt, "\(directory): \(JournalFormat.manifestName): \(files.manifestProblem ?? "missing")")
        }
        let live = HistoryFile.Base(
            checkpoint: manifest.checkpointSequence, firstSegment: manifest.firstSegment, time: 0)
        // History bases older than the manifest's (a crash between the history file and the manifest may leave one
        // newer: the manifest's own is what the journal continues from).
        var bases = (files.history?.bases ?? []).filter {
            $0.checkpoint < live.checkpoint && $0.firstSegment < live.firstSegment
                && ($0.checkpoint == 0 || files.checkpoints[$0.checkpoint] != nil)
        }
        bases.append(live)
        return Retained(bases: bases, history: files.history, manifest: manifest)
    }

    /// The error for history wanted from `sequence` on when the first retained record is `first`.
    package static func compacted(from sequence: UInt64, first: UInt64) -> TrellisError {
        TrellisError(
            .historyCompacted,
            "history before sequence \(first) was compacted (asked from \(sequence)); StoreOptions.history says how "
                + "much a compaction keeps")
    }

    /// Calls `body` with every record numbered `after + 1` through `through`, in order, each decoded with the
    /// schema it was written with. Throws `.historyCompacted` when record `after + 1` is no longer retained, and
    /// `.corrupt` when a record up to `through` does not read. A segment removed by a compaction meanwhile is
    /// retried from a fresh listing.
    package func records(
        after: UInt64, through: UInt64, _ body: (JournalRecord) throws -> Void
    ) throws {
        guard through > after else { return }
        var delivered = after
        var attempts = 0
        while true {
            do {
                try walk(after: delivered, through: through) { record in
                    try body(record)
                    delivered = record.sequence
                }
                return
            } catch let error as TrellisError
                where (error.code == .corrupt || error.code == .io) && attempts < 3 && delivered < through
            {
                // A compaction may have removed the segments between the listing and the read.
                attempts += 1
                let files = try StoreFiles.list(layer, directory)
                let first = try retained(files).first
                if delivered + 1 < first { throw Self.compacted(from: delivered + 1, first: first) }
                if attempts == 3 { throw error }
            }
        }
    }

    private struct Stop: Error {}

    private func walk(after: UInt64, through: UInt64, _ body: (JournalRecord) throws -> Void) throws {
        let files = try StoreFiles.list(layer, directory)
        let kept = try retained(files)
        guard after + 1 >= kept.first else { throw Self.compacted(from: after + 1, first: kept.first) }
        // The segment holding record after + 1: the last one starting at or before it.
        let base = kept.bases.last { $0.checkpoint <= after }!
        let ids = files.segments.keys.filter { $0 >= base.firstSegment && $0 <= kept.manifest.lastSegment }.sorted()
        var start: (id: UInt64, sequence: UInt64, schema: Schema?)?
        var previousSchema: Schema?
        for id in ids {
            let header = try segmentHeader(files, id)
            if header.sequence > after + 1 { break }
            let schema = try SchemaCodec.decode(header.schemaBytes, context: JournalFormat.segmentName(id))
            start = (id, header.sequence, previousSchema)
            previousSchema = schema
        }
        guard let start else {
            // The history file says record after + 1 is retained, but no segment holds it.
            throw TrellisError(
                .corrupt,
                "\(directory): no segment holds record \(after + 1), which the history retains (from \(kept.first)): "
                    + "a segment is missing")
        }
        var startSchema = start.schema
        if startSchema == nil, start.sequence == base.checkpoint + 1, base.checkpoint > 0 {
            startSchema = try checkpointSchema(base.checkpoint)
        }
        let manifest = Manifest(
            generation: 0, fingerprint: 0, checkpointSequence: start.sequence - 1, checkpointBytes: 0,
            firstSegment: start.id, lastSegment: kept.manifest.lastSegment, durableSequence: 0)
        let reader = JournalReader(path: directory, layer: layer)
        var reached = after
        var problems: [JournalProblem] = []
        do {
            let outcome = try reader.walkRecords(files, manifest, startingWith: startSchema) { record in
                guard record.sequence > after else { return nil }
                guard record.sequence <= through else { throw Stop() }
                try body(record)
                reached = record.sequence
                if reached == through { throw Stop() }
                return nil
            }
            problems = outcome.problems
        } catch is Stop {
            return
        }
        // `.max`: to the end of what reads (a store another process writes, whose durable end is not known here).
        if reached < through && through != .max {
            let problem = problems.first.map { "\($0)" } ?? "the journal ends at \(reached)"
            throw TrellisError(.corrupt, "\(directory): history through \(through) does not read: \(problem)")
        }
    }

    /// The graph as it was right after record `sequence`: the retained checkpoint before it (or the empty graph)
    /// with the records after it applied, as recovery applies them. Throws `.historyCompacted` for a sequence
    /// before the retained history.
    package func graph(at sequence: UInt64) throws -> Graph {
        let files = try StoreFiles.list(layer, directory)
        let kept = try retained(files)
        guard sequence >= kept.bases[0].checkpoint else {
            throw Self.compacted(from: sequence, first: kept.first)
        }
        let base = kept.bases.last { $0.checkpoint <= sequence }!
        var graph: Graph
        if base.checkpoint > 0 {
            let name = JournalFormat.checkpointName(base.checkpoint)
            let file = try layer.open(joinPath(directory, name), .read)
            defer { file.close() }
            graph = try Checkpoint.load(file, name: name, schema: nil)
        } else {
            let header = try segmentHeader(files, base.firstSegment)
            graph = Graph(
                schema: try SchemaCodec.decode(
                    header.schemaBytes, context: JournalFormat.segmentName(base.firstSegment)))
        }
        guard sequence > base.checkpoint else { return graph }
        let manifest = Manifest(
            generation: 0, fingerprint: 0, checkpointSequence: base.checkpoint, checkpointBytes: 0,
            firstSegment: base.firstSegment, lastSegment: kept.manifest.lastSegment, durableSequence: 0)
        let reader = JournalReader(path: directory, layer: layer)
        do {
            let outcome = try reader.walkRecords(files, manifest, startingWith: graph.schema) { record in
                guard record.sequence <= sequence else { throw Stop() }
                graph = try record.applied(to: graph)
                if record.sequence == sequence { throw Stop() }
                return nil
            }
            let problem = outcome.problems.first.map { "\($0)" } ?? "the journal ends at \(graph.sequence)"
            throw TrellisError(.corrupt, "\(directory): the version at \(sequence) does not read: \(problem)")
        } catch is Stop {
            return graph
        }
    }

    private func segmentHeader(_ files: StoreFiles, _ id: UInt64) throws -> FileHeader {
        guard let name = files.segments[id] else {
            throw TrellisError(.corrupt, "\(directory): segment \(JournalFormat.segmentName(id)) is missing")
        }
        let file = try layer.open(joinPath(directory, name), .read)
        defer { file.close() }
        return try readSegmentHeader(file, name: name, size: try file.size())
    }

    private func checkpointSchema(_ sequence: UInt64) throws -> Schema {
        let name = JournalFormat.checkpointName(sequence)
        let file = try layer.open(joinPath(directory, name), .read)
        defer { file.close() }
        let header = try Checkpoint.header(file, name: name, size: try file.size())
        return try SchemaCodec.decode(header.schemaBytes, context: name)
    }
}

extension JournalReader {
    /// What a store's `HISTORY` file says (format version 7): its id, the history it keeps beyond the journal and
    /// why, and its consumers' acknowledgements; nil when it has none.
    public func historySummary() throws -> HistorySummary? {
        let files = try StoreFiles.list(layer, path)
        guard let history = files.history else { return nil }
        let retained = try HistoryReader(layer: layer, directory: path).retained(files)
        return HistorySummary(
            storeID: history.storeID, firstRetained: retained.first,
            keptCheckpoints: retained.bases.dropLast().map(\.checkpoint),
            firstKeptSegment: retained.bases[0].firstSegment, retention: history.retention,
            acknowledged: history.consumers.mapValues(\.sequence))
    }
}

/// A store's `HISTORY` file, read (`JournalReader.historySummary()`).
public struct HistorySummary: Sendable, Equatable {
    /// The store's id, which history tokens carry.
    public var storeID: UUID
    /// The first commit whose record is retained.
    public var firstRetained: UInt64
    /// The checkpoints kept for history beside the store's own (0: the empty store before commit 1).
    public var keptCheckpoints: [UInt64]
    /// The first segment kept (history, then the journal).
    public var firstKeptSegment: UInt64
    /// The retention rule in force when a compaction last wrote the file.
    public var retention: HistoryRetention
    /// Each consumer's acknowledged sequence number.
    public var acknowledged: [String: UInt64]
}

import Foundation

/// What opening a directory store produced, for `Store.init(directory:schema:options:)`.
struct OpenedStore {
    var graph: Graph
    /// The writer side; nil for a read-only open.
    var journal: Journal?
    var report: RecoveryReport
    /// Salvage skipped damage: the store rewrites itself as a checkpoint before it serves.
    var needsRewrite: Bool
}

/// Opens a store directory: creates it (owner-only) or recovers it, takes the writer lock, cleans up leftovers.
enum StoreOpener {
    static func open(directory: String, schema: Schema, options: StoreOptions) throws -> OpenedStore {
        let layer = options.fileLayer
        if options.readOnly {
            guard layer.exists(directory).isDirectory else {
                throw TrellisError(.io, "there is no store at \(directory) to open read-only")
            }
            let recovered = try readWithoutLock(layer: layer, directory: directory, schema: schema, options: options)
            return OpenedStore(graph: recovered.graph, journal: nil, report: recovered.report, needsRewrite: false)
        }
        try layer.createDirectory(directory)
        let lock = try layer.lockExclusively(joinPath(directory, JournalFormat.lockName))
        do {
            let recovery = StoreRecovery(
                layer: layer, directory: directory, schema: schema, policy: options.recovery, readOnly: false)
            if let recovered = try recovery.run() {
                let segment = try OpenSegment.reopen(recovered.tail, layer: layer, directory: directory)
                // What recovery read may not all be durable: a writer that died, or whose directory sync failed,
                // can leave records and renames (a new manifest) in the page cache only. Make them durable before
                // anything is acknowledged on top of them, or shown to readers.
                do {
                    try segment.file.sync()
                    try layer.syncDirectory(directory)
                } catch {
                    segment.file.close()
                    throw error
                }
                var report = recovered.report
                report.removedFiles = removeLeftovers(
                    recovered.files.unreferenced(by: recovered.manifest), layer, directory)
                let journal = Journal(
                    layer: layer, directory: directory, schema: schema, options: options, lock: lock,
                    segment: segment, graph: recovered.graph, manifest: recovered.manifest,
                    segmentBytes: recovered.segmentBytes)
                return OpenedStore(
                    graph: recovered.graph, journal: journal, report: report, needsRewrite: recovered.needsRewrite)
            }
            return try create(directory: directory, schema: schema, options: options, layer: layer, lock: lock)
        } catch {
            lock.release()
            throw error
        }
    }

    /// A new store: segment 1, then the manifest that names it (the commit point of creation). Leftovers of a
    /// creation that crashed before its manifest hold no records (recovery checked) and are removed first.
    private static func create(
        directory: String, schema: Schema, options: StoreOptions, layer: any FileLayer, lock: any LayerLock
    ) throws -> OpenedStore {
        let files = try StoreFiles.list(layer, directory)
        var report = RecoveryReport()
        report.created = true
        report.removedFiles = removeLeftovers(
            files.temporaries + Array(files.segments.values) + Array(files.checkpoints.values), layer, directory)
        let segment = try OpenSegment.create(
            id: 1, firstSequence: 1, schema: schema, layer: layer, directory: directory)
        let manifest = Manifest(
            generation: 1, fingerprint: schema.fingerprint, checkpointSequence: 0, checkpointBytes: 0, firstSegment: 1,
            lastSegment: 1)
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
        return OpenedStore(graph: graph, journal: journal, report: report, needsRewrite: false)
    }

    /// Removes files no manifest references; a failure leaves them for the next open and is not an error.
    private static func removeLeftovers(_ names: [String], _ layer: any FileLayer, _ directory: String) -> [String] {
        guard !names.isEmpty else { return [] }
        var removed: [String] = []
        for name in names.sorted() where (try? layer.remove(joinPath(directory, name))) != nil {
            removed.append(name)
        }
        try? layer.syncDirectory(directory)
        return removed
    }

    /// A read-only open takes no lock, so a writer may compact meanwhile and delete a segment the reader was about to
    /// read. When reading fails and the manifest or the directory's files changed under it, the reader starts again;
    /// damage that stays put is reported as it is.
    private static func readWithoutLock(
        layer: any FileLayer, directory: String, schema: Schema, options: StoreOptions
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
                    layer: layer, directory: directory, schema: schema, policy: options.recovery, readOnly: true)
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

import TrellisCore
import TrellisGraph

extension JournalReader {
    /// The graph held by the checkpoint the manifest names, checked chunk by chunk; an empty graph when the store has
    /// no checkpoint yet. The graph is in the schema the checkpoint was written with (without one, the first
    /// segment's), which is where the journal's records after `manifest().checkpointSequence` start: they replay on
    /// top of it with `JournalRecord.applied(to:)`, migrations included, which is how tools rebuild the store as of
    /// any sequence number the journal still holds.
    ///
    /// ```swift
    /// let reader = try JournalReader(directory: url)
    /// var graph = try reader.checkpointGraph()
    /// try reader.forEachRecord { r in if r.sequence <= asOf { graph = try r.applied(to: graph) } }
    /// ```
    /// Throws a `JournalProblem` for a missing manifest or a missing or damaged checkpoint.
    public func checkpointGraph() throws -> Graph {
        let files = try StoreFiles.list(layer, path)
        guard let manifest = files.manifest else {
            throw JournalProblem(
                .manifest, file: JournalFormat.manifestName, offset: 0, files.manifestProblem ?? "missing")
        }
        guard manifest.checkpointSequence > 0 else { return Graph(schema: try startSchema(files, manifest)) }
        let name = JournalFormat.checkpointName(manifest.checkpointSequence)
        guard files.checkpoints[manifest.checkpointSequence] != nil else {
            throw JournalProblem(.missingFile, file: name, offset: 0, "the manifest names it; it is not there")
        }
        let file = try layer.open(joinPath(path, name), .read)
        defer { file.close() }
        return try Checkpoint.load(file, name: name, schema: nil)
    }
}

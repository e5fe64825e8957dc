import TrellisCore
import TrellisGraph

extension JournalReader {
    /// The snapshot held by the checkpoint the manifest names, checked chunk by chunk; an empty snapshot when the
    /// store has no checkpoint yet. It is in the schema the checkpoint was written with (without one, the first
    /// segment's), which is where the journal's records after `manifest().checkpointSequence` start: they replay on
    /// top of it with `JournalRecord.applied(to:)`, migrations included, which is how tools rebuild the store as of
    /// any sequence number the journal still holds.
    ///
    /// ```swift
    /// let reader = try JournalReader(directory: url)
    /// var snapshot = try reader.checkpointSnapshot()
    /// try reader.forEachRecord { r in if r.sequence <= asOf { snapshot = try r.applied(to: snapshot) } }
    /// ```
    /// Throws a `JournalProblem` for a missing manifest or a missing or damaged checkpoint.
    public func checkpointSnapshot() throws -> Snapshot {
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
        return try Checkpoint.load(file, name: name, schema: nil, manifestBytes: manifest.checkpointBytes)
    }
}

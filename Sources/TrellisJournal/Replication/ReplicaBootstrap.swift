import TrellisCore
import TrellisGraph

/// A store's checkpoint as replication carries it, and a new store made from one (a replica's bootstrap).
package enum ReplicaBootstrap {
    /// The checkpoint the manifest of the store in `directory` names, with its bytes, when it is of a record after
    /// `after`; nil otherwise (the file is not read then). A compaction that replaces it meanwhile makes the read
    /// fail (`io`): ask again.
    package static func checkpoint(
        directory: String, after: UInt64, layer: any FileLayer = StoreOptions().fileLayer
    ) throws -> (sequence: UInt64, bytes: [UInt8])? {
        let manifest = try Manifest.parse(
            try layer.readWhole(joinPath(directory, JournalFormat.manifestName), limit: JournalFormat.maxHeaderBytes),
            file: JournalFormat.manifestName)
        guard manifest.checkpointSequence > after else { return nil }
        let name = JournalFormat.checkpointName(manifest.checkpointSequence)
        let bytes = try layer.readWhole(joinPath(directory, name), limit: Int(clamping: manifest.checkpointBytes))
        guard bytes.count == Int(clamping: manifest.checkpointBytes) else {
            throw TrellisError(.io, "\(directory)/\(name): \(bytes.count) bytes where the manifest says otherwise")
        }
        return (manifest.checkpointSequence, bytes)
    }

    /// Makes a new store in `directory` (which must hold no store) from a checkpoint of record `sequence`: the
    /// checkpoint file, an empty segment whose first record is `sequence` + 1, and the manifest naming both, written
    /// last, so a crash before it leaves no store (the next open creates one anew). Only the checkpoint's header is
    /// read here (its record and schema): the caller opens the store next, which loads and checks the whole
    /// checkpoint as recovery does, and removes the manifest if that fails. The store takes the checkpoint's own
    /// schema (the one in effect at its record, which a migration since may have changed); with `schema`, the
    /// checkpoint must be in that schema's structure. Returns the store's schema.
    @discardableResult
    package static func createStore(
        directory: String, checkpoint bytes: [UInt8], sequence: UInt64, schema expected: Schema? = nil,
        layer: any FileLayer = StoreOptions().fileLayer
    ) throws -> Schema {
        let name = JournalFormat.checkpointName(sequence)
        guard let length = FileHeader.length(Array(bytes.prefix(16)), magic: JournalFormat.checkpointMagic),
            length <= bytes.count
        else {
            throw TrellisError(.corrupt, "\(directory)/\(name): not a Trellis checkpoint, or truncated")
        }
        let header = try FileHeader.parse(Array(bytes.prefix(length)), magic: JournalFormat.checkpointMagic, file: name)
        let schema = try SchemaCodec.decode(header.schemaBytes, context: "\(directory)/\(name)")
        guard header.sequence == sequence, expected.map({ $0.fingerprint == schema.fingerprint }) ?? true else {
            throw TrellisError(.corrupt, "\(name): not the checkpoint of record \(sequence) in this schema")
        }
        try layer.createDirectory(directory)
        try layer.writeAtomically(bytes, to: joinPath(directory, name), directory: directory)
        let segment = try OpenSegment.create(
            id: 1, firstSequence: sequence + 1, schema: schema, layer: layer, directory: directory)
        segment.file.close()
        let manifest = Manifest(
            generation: 1, fingerprint: schema.fingerprint, checkpointSequence: sequence,
            checkpointBytes: UInt64(bytes.count), firstSegment: 1, lastSegment: 1, durableSequence: sequence)
        try layer.writeAtomically(
            manifest.encoded(), to: joinPath(directory, JournalFormat.manifestName), directory: directory)
        return schema
    }

    /// The schema record 1 of the store in `directory` was written in (the header of segment 1, while the journal
    /// still holds it from record 1): what a replica that starts from record 1 must be created with, whatever
    /// migrations came since. Nil when segment 1 is gone or does not start at record 1.
    package static func firstRecordSchema(
        directory: String, layer: any FileLayer = StoreOptions().fileLayer
    ) throws -> Schema? {
        let name = JournalFormat.segmentName(1)
        guard layer.exists(joinPath(directory, name)).exists else { return nil }
        let file = try layer.open(joinPath(directory, name), .read)
        defer { file.close() }
        let header = try readSegmentHeader(file, name: name, size: try file.size())
        guard header.sequence == 1 else { return nil }
        return try SchemaCodec.decode(header.schemaBytes, context: "\(directory)/\(name)")
    }
}

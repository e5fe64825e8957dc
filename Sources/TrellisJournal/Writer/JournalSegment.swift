import TrellisCore
import TrellisGraph

/// The segment the flusher appends to: its file, id, salt and the offset where the next record goes.
package struct OpenSegment {
    package var id: UInt64
    package var file: any LayerFile
    var salt: UInt64
    package var end: Int
    var headerSize: Int
    /// The file's length including space reserved past `end` (zeros). Never cut back: a reader may be reading it.
    var allocated: Int

    var isEmpty: Bool { end == headerSize }

    /// Creates segment `id` whose first record will be `firstSequence`: the header is written to a temporary file,
    /// synced, renamed into place and the directory synced, so a segment is never seen with a partial header.
    package static func create(
        id: UInt64, firstSequence: UInt64, schema: Schema, layer: any FileLayer, directory: String
    ) throws -> OpenSegment {
        let header = FileHeader(
            magic: JournalFormat.segmentMagic, id: id, sequence: firstSequence,
            salt: UInt64.random(in: 1...UInt64.max), fingerprint: schema.fingerprint,
            schemaBytes: SchemaCodec.encode(schema))
        let bytes = header.encoded()
        let path = joinPath(directory, JournalFormat.segmentName(id))
        try layer.writeAtomically(bytes, to: path, directory: directory)
        let file = try layer.open(path, .readWrite)
        return OpenSegment(
            id: id, file: file, salt: header.salt, end: bytes.count, headerSize: bytes.count, allocated: bytes.count)
    }

    /// Reopens the last segment of a recovered store for appending after its last valid record.
    package static func reopen(_ tail: JournalWalk.Tail, layer: any FileLayer, directory: String) throws -> OpenSegment
    {
        let file = try layer.open(joinPath(directory, tail.name), .readWrite)
        return OpenSegment(
            id: tail.segment, file: file, salt: tail.header.salt, end: tail.validEnd,
            headerSize: tail.header.encoded().count, allocated: tail.size)
    }

    package init(id: UInt64, file: any LayerFile, salt: UInt64, end: Int, headerSize: Int, allocated: Int) {
        self.id = id
        self.file = file
        self.salt = salt
        self.end = end
        self.headerSize = headerSize
        self.allocated = allocated
    }
}

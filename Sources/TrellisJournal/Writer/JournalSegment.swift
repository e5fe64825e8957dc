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
    /// Where the zeros the writer wrote and synced past `end` stop (`Journal.zeroAheadIfDue`): a record written
    /// before it overwrites blocks the file system has allocated and initialized already, so its sync writes data
    /// only. At most `allocated`.
    var zeroed: Int
    /// The segment's format version: records appended to it take its frame layout (a version-5 segment a store
    /// reopened from an older build keeps 32-byte frame headers without a watermark until it is rotated).
    var version: UInt16

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
        var segment = OpenSegment(
            id: tail.segment, file: file, salt: tail.header.salt, end: tail.validEnd,
            headerSize: tail.header.encoded().count, allocated: tail.size, version: tail.header.version)
        // The zeros past the records count as written: they may be reserved space instead, which only makes the first
        // syncs over them slower, and writing them again would grow the file past what an earlier writer reserved.
        segment.zeroed = tail.size
        return segment
    }

    /// Writes the bytes of `tail` that are not known to be durable (after the records the manifest's durable
    /// sequence covers, up to the last valid record) again, the same bytes at the same offsets, and returns how many.
    /// After a failed sync, Linux may have marked those pages clean without writing them: a read (recovery's) still
    /// finds them in the page cache, but a sync no longer writes them. Written again they are dirty again, so the
    /// sync that follows (the caller's) makes them durable or fails.
    package func rewriteUnconfirmed(_ tail: JournalWalk.Tail) throws -> Int {
        precondition(tail.segment == id, "the tail of another segment")
        let chunk = 1 << 20
        var offset = tail.durableEnd
        while offset < tail.validEnd {
            let count = min(chunk, tail.validEnd - offset)
            let bytes = try file.read(at: offset, count: count)
            guard bytes.count == count else {
                throw TrellisError(
                    .io, "segment \(id): read \(bytes.count) of \(count) bytes at offset \(offset) to write them again")
            }
            try file.write(bytes, at: offset)
            offset += count
        }
        return max(0, tail.validEnd - tail.durableEnd)
    }

    package init(
        id: UInt64, file: any LayerFile, salt: UInt64, end: Int, headerSize: Int, allocated: Int,
        version: UInt16 = JournalFormat.version
    ) {
        self.id = id
        self.version = version
        self.file = file
        self.salt = salt
        self.end = end
        self.headerSize = headerSize
        self.allocated = allocated
        self.zeroed = end
    }
}

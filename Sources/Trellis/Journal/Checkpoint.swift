import Foundation

/// Writes and reads checkpoints: the whole graph at one sequence number, in checksummed, compressed chunks.
///
/// A checkpoint file is a `FileHeader` (magic `\x89TRC`, the sequence number it holds, salt, schema) followed by
/// frames (`RecordFrame`): `checkpointRows` chunks numbered 1, 2, 3… and one `checkpointFooter` as the last frame,
/// ending exactly at the end of the file.
///
/// Rows chunk payload: entity, row count, then per row: serial, one value per attribute (schema order), and per
/// relationship (schema order) the target count and target serials. Both ends of every relationship are stored as
/// they are, dangling targets of `noAction` deletes included, so loading mirrors the graph exactly.
///
/// Footer payload: sequence number, entity count, per entity: the highest serial ever allocated and the object count,
/// then the number of rows chunks. The highest serials keep deleted objects' IDs from being reused.
enum Checkpoint {
    /// Rows are cut into chunks of about this many uncompressed bytes, so writing and reading a checkpoint holds
    /// one chunk in memory however large the store.
    static let chunkBytes = 1 << 20
    static let compressionLevel: Int32 = 6
    static let knownTypes: Set<UInt8> = [RecordType.checkpointRows.rawValue, RecordType.checkpointFooter.rawValue]

    /// Writes `graph` to `<name>.tmp`, syncs it and renames it to its final name, then syncs the directory.
    /// Returns the file's size. `afterChunk` runs after each chunk is written (a hook for tests).
    static func write(
        _ graph: Graph, layer: any FileLayer, directory: String, afterChunk: (@Sendable () -> Void)? = nil
    ) throws -> Int {
        let name = JournalFormat.checkpointName(graph.sequence)
        let path = joinPath(directory, name)
        let temporary = path + JournalFormat.temporarySuffix
        let file = try layer.open(temporary, .create)
        do {
            let salt = UInt64.random(in: 1...UInt64.max)
            let header = FileHeader(
                magic: JournalFormat.checkpointMagic, id: 0, sequence: graph.sequence, salt: salt,
                fingerprint: graph.schema.fingerprint, schemaBytes: SchemaCodec.encode(graph.schema))
            var offset = 0
            var chunkNumber: UInt64 = 0
            func emit(_ type: RecordType, _ payload: [UInt8]) throws {
                chunkNumber += 1
                let frame = RecordFrame.encode(
                    type: type, payload: payload, sequence: chunkNumber, time: 0, salt: salt,
                    compressionLevel: compressionLevel)
                try file.write(frame, at: offset)
                offset += frame.count
                afterChunk?()
            }
            let headerBytes = header.encoded()
            try file.write(headerBytes, at: 0)
            offset = headerBytes.count
            for (e, layout) in graph.schema.layouts.enumerated() {
                var rows = ByteWriter(capacity: chunkBytes + 4096)
                var count = 0
                func flushRows() throws {
                    guard count > 0 else { return }
                    var chunk = ByteWriter(capacity: rows.count + 16)
                    chunk.varint(e)
                    chunk.varint(count)
                    chunk.append(rows.bytes)
                    try emit(.checkpointRows, chunk.bytes)
                    rows = ByteWriter(capacity: chunkBytes + 4096)
                    count = 0
                }
                for row in graph.rows(entity: UInt32(e)) {
                    rows.varint(row.id.serial)
                    for a in 0..<layout.attributes.count { rows.value(row.value(at: a)) }
                    for k in 0..<layout.relationships.count {
                        let targets = row.targetSerials(RelationshipKey(entity: UInt32(e), index: k))
                        rows.varint(targets.count)
                        for t in targets { rows.varint(t) }
                    }
                    count += 1
                    if rows.count >= chunkBytes { try flushRows() }
                }
                try flushRows()
            }
            var footer = ByteWriter()
            footer.varint(graph.sequence)
            footer.varint(graph.schema.layouts.count)
            for (e, maxSerial) in graph.maxSerials.enumerated() {
                footer.varint(maxSerial)
                footer.varint(graph.count(entity: UInt32(e)))
            }
            footer.varint(chunkNumber)
            try emit(.checkpointFooter, footer.bytes)
            CrashPoints.hit("before-checkpoint-sync")
            try file.sync()
            file.close()
            try layer.rename(temporary, to: path)
            CrashPoints.hit("after-checkpoint-rename")
            try layer.syncDirectory(directory)
            return offset
        } catch {
            file.close()
            try? layer.remove(temporary)
            throw error
        }
    }

    /// Reads the header of a checkpoint file (to learn its schema, salt and sequence number).
    static func header(_ file: any LayerFile, name: String, size: Int) throws -> FileHeader {
        let prefix = try file.read(at: 0, count: min(size, 16))
        guard let length = FileHeader.length(prefix, magic: JournalFormat.checkpointMagic), length <= size else {
            throw TrellisError(.corrupt, "\(name) at offset 0: header: not a Trellis checkpoint, or truncated")
        }
        return try FileHeader.parse(
            try file.read(at: 0, count: length), magic: JournalFormat.checkpointMagic, file: name)
    }

    /// Loads a checkpoint into a new graph of `schema`, checking every chunk, the footer's counts and the end of the
    /// file. Throws a `JournalProblem` naming the file, the offset and the class of any damage (`TrellisError` for
    /// I/O errors).
    static func load(_ file: any LayerFile, name: String, schema: Schema) throws -> Graph {
        let size = try file.size()
        let header: FileHeader
        do {
            header = try self.header(file, name: name, size: size)
        } catch let error as TrellisError where error.code == .corrupt {
            throw JournalProblem(.header, file: name, offset: 0, error.message)
        }
        func damage(_ kind: JournalProblem.Kind, _ offset: Int, _ message: String) -> JournalProblem {
            JournalProblem(kind, file: name, offset: offset, message)
        }
        guard header.fingerprint == schema.fingerprint else {
            throw damage(.schema, 0, "written with schema fingerprint \(header.fingerprint), not \(schema.fingerprint)")
        }
        // The manifest names a checkpoint by its file name; the graph takes the header's sequence number.
        if let named = JournalFormat.checkpointSequence(name), named != header.sequence {
            throw damage(.header, 24, "holds sequence \(header.sequence) but is named for \(named)")
        }
        var scanner = FrameScanner(
            file, name: name, size: size, salt: header.salt, otherSalts: [], knownTypes: knownTypes)
        var graph = Graph(schema: schema)
        var offset = Int(FileHeader.length(try file.read(at: 0, count: 16), magic: JournalFormat.checkpointMagic)!)
        var expected: UInt64 = 1
        while true {
            let step = try scanner.step(at: offset)
            guard case .frame(let frame) = step else {
                if case .damage(let kind, let message) = step { throw damage(kind, offset, message) }
                throw damage(.length, offset, "the checkpoint ends before its footer")
            }
            guard frame.header.sequence == expected else {
                throw damage(.sequenceGap, offset, "chunk \(frame.header.sequence) where \(expected) was due")
            }
            expected += 1
            let payload = try frame.payload(file: name)
            let context = "\(name) chunk \(frame.header.sequence) at offset \(offset)"
            do {
                if frame.header.type == RecordType.checkpointFooter.rawValue {
                    try graph.finishLoading(payload, sequence: header.sequence, chunks: expected - 2, context: context)
                    guard offset + frame.header.frameSize == size else {
                        throw TrellisError(.corrupt, "\(context): bytes follow the footer")
                    }
                    return graph
                }
                try graph.loadRows(payload, context: context)
            } catch let error as TrellisError where error.code == .corrupt {
                throw damage(.decode, offset, error.message)
            }
            offset += frame.header.frameSize
        }
    }
}

extension Graph {
    /// Adds the rows of one checkpoint chunk through the table primitives that commits use (`insertRow`,
    /// `addTarget`), storing each relationship end as it was written.
    mutating func loadRows(_ payload: [UInt8], context: String) throws {
        var r = ByteReader(payload, context: context)
        let e = try r.int(limit: schema.layouts.count - 1)
        let layout = schema.layouts[e]
        let count = try r.count(minimumBytes: 1 + layout.attributes.count + layout.relationships.count)
        var values: [Value] = []
        values.reserveCapacity(layout.attributes.count)
        for _ in 0..<count {
            let serial = try r.varint()
            values.removeAll(keepingCapacity: true)
            for _ in 0..<layout.attributes.count { values.append(try r.value()) }
            guard serial != 0, tables[e].insertRow(serial, values, layout: layout) else {
                throw r.failure("row \(serial) is a duplicate or has a value of the wrong type")
            }
            for k in 0..<layout.relationships.count {
                let n = try r.count()
                if n > 1 && !layout.relationships[k].isToMany { throw r.failure("to-one with \(n) targets") }
                for _ in 0..<n {
                    let target = try r.varint()
                    guard target != 0 else { throw r.failure("target serial 0") }
                    _ = tables[e].addTarget(serial, k, target, layout: layout)
                }
            }
        }
        guard r.isAtEnd else { throw r.failure("trailing bytes") }
    }

    /// Checks the footer against what was loaded and restores the highest serials.
    mutating func finishLoading(_ payload: [UInt8], sequence: UInt64, chunks: UInt64, context: String) throws {
        var r = ByteReader(payload, context: context)
        let stored = try r.varint()
        guard stored == sequence else { throw r.failure("footer sequence \(stored) differs from the header's") }
        let n = try r.count(minimumBytes: 2)
        guard n == tables.count else { throw r.failure("footer lists \(n) entities; the schema has \(tables.count)") }
        for e in 0..<n {
            let maxSerial = try r.varint()
            let count = try r.varint()
            guard count == UInt64(tables[e].count), maxSerial >= tables[e].maxSerial else {
                throw r.failure("entity \(e) should hold \(count) objects up to serial \(maxSerial)")
            }
            tables[e].maxSerial = maxSerial
        }
        let chunkCount = try r.varint()
        guard chunkCount == chunks, r.isAtEnd else { throw r.failure("footer chunk count \(chunkCount) is wrong") }
        self.sequence = sequence
    }
}

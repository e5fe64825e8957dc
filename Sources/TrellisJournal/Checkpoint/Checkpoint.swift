import Foundation
import TrellisCore
import TrellisGraph

/// Writes and reads checkpoints: the whole graph at one sequence number, in checksummed chunks.
///
/// A checkpoint file is a `FileHeader` (magic `\x89TRC`, the sequence number it holds, salt, schema) followed by
/// frames (`RecordFrame`): chunks numbered 1, 2, 3… and one `checkpointFooter` as the last frame, ending exactly at the
/// end of the file.
///
/// Format version 2 writes `checkpointColumns` chunks: runs of rows of one entity stored column by column, each
/// column compressed on its own (`CheckpointColumns`), and loads them bottom-up (`GraphBulkLoader`). Version-1
/// files hold `checkpointRows` chunks instead (entity, row count, then per row: serial, one tagged value per attribute,
/// per relationship the target count and serials), which still load, row by row, through `Graph.loadRows`. Both ends
/// of every relationship are stored as they are, dangling targets of `noAction` deletes included, so loading mirrors
/// the graph exactly.
///
/// Footer payload: sequence number, entity count, per entity: the highest serial ever allocated and the object count,
/// then the number of chunks. The highest serials keep deleted objects' IDs from being reused.
enum Checkpoint {
    /// Columns are deflated at this level (checkpoints are written in the background).
    static let compressionLevel: Int32 = 6

    /// The frame types a checkpoint of each format version holds.
    static func knownTypes(version: UInt16) -> Set<UInt8> {
        switch version {
        case 1: return [RecordType.checkpointRows.rawValue, RecordType.checkpointFooter.rawValue]
        case 2: return [RecordType.checkpointColumns.rawValue, RecordType.checkpointFooter.rawValue]
        default:
            return [
                RecordType.checkpointColumns.rawValue, RecordType.checkpointIndexOrder.rawValue,
                RecordType.checkpointFooter.rawValue,
            ]
        }
    }

    /// Writes `graph` to `<name>.tmp`, syncs it and renames it to its final name, then syncs the directory.
    /// Returns the file's size. `afterChunk` runs after each chunk is written (a hook for tests).
    ///
    /// Tests may also write an older `version` (2: no stored index order) and choose the stored `places` of each
    /// index (`CheckpointIndexOrder.places` by default). A chunk larger than `fragmentBytes` (one huge value, the
    /// order of an index of hundreds of millions of objects) is written as several frames (format version 10), up to the
    /// 512 MiB a chunk's sections are read back with; the footer is always one frame.
    static func write(
        _ graph: Graph, layer: any FileLayer, directory: String, version: UInt16 = JournalFormat.version,
        places: (EntityTable, Int) -> [Int64]? = CheckpointIndexOrder.places,
        fragmentBytes: Int = JournalFormat.defaultFragmentBytes, afterChunk: (@Sendable () -> Void)? = nil
    ) throws -> Int {
        precondition(version == 2 || version == JournalFormat.version, "Checkpoint.write: format version \(version)")
        let name = JournalFormat.checkpointName(graph.sequence)
        let path = joinPath(directory, name)
        let temporary = path + JournalFormat.temporarySuffix
        let file = try layer.open(temporary, .create)
        do {
            let salt = UInt64.random(in: 1...UInt64.max)
            let header = FileHeader(
                magic: JournalFormat.checkpointMagic, id: 0, sequence: graph.sequence, salt: salt,
                fingerprint: graph.schema.fingerprint, schemaBytes: SchemaCodec.encode(graph.schema), version: version)
            var offset = 0
            var chunkNumber: UInt64 = 0
            func emit(_ type: RecordType, _ payload: [UInt8]) throws {
                chunkNumber += 1
                // Columns chunks compress column by column; the footer is a few bytes, and always one frame (a
                // reader finds it as the last frame of the file).
                let frame = RecordFrame.encode(
                    type: type, pieces: [payload],
                    fragmentBytes: type == .checkpointFooter ? max(payload.count, 1) : fragmentBytes,
                    sequence: chunkNumber, time: 0, salt: salt, compressionLevel: nil, version: version)
                try file.write(frame, at: offset)
                offset += frame.count
                afterChunk?()
            }
            let headerBytes = header.encoded()
            try file.write(headerBytes, at: 0)
            offset = headerBytes.count
            for (e, layout) in graph.schema.layouts.enumerated() {
                try writeColumns(graph.tables[e], entity: e, layout: layout) { try emit(.checkpointColumns, $0) }
                // An element index has an entry per element, not per object: it is rebuilt by sorting.
                for i in layout.indexes.indices where version >= 3 && !layout.indexes[i].isElements {
                    guard let places = places(graph.tables[e], i) else { continue }
                    let payload = CheckpointIndexOrder.encode(
                        entity: e, index: i, places: places, level: compressionLevel)
                    // A chunk's sections are read back with a bound of 512 MiB each (a damage check); a chunk beyond
                    // that could be written in fragments but not loaded, so it fails the compaction instead.
                    guard payload.count <= JournalFormat.maxRecordBytes else {
                        throw TrellisError(
                            .failed, "\(layout.name): the order of index \(i) takes \(payload.count) bytes, too many")
                    }
                    try emit(.checkpointIndexOrder, payload)
                }
            }
            let footer = ByteWriter.bytes { footer in
                footer.varint(graph.sequence)
                footer.varint(graph.schema.layouts.count)
                for (e, maxSerial) in graph.maxSerials.enumerated() {
                    footer.varint(maxSerial)
                    footer.varint(graph.count(entity: UInt32(e)))
                }
                footer.varint(chunkNumber)
            }
            try emit(.checkpointFooter, footer)
            CrashPoints.hit("before-checkpoint-sync")
            try file.sync()
            file.close()
            try layer.rename(temporary, to: path)
            CrashPoints.hit("after-checkpoint-rename")
            try layer.syncDirectory(directory)
            return offset
        } catch {
            file.close()
            throw layer.removingTemporary(temporary, after: error)
        }
    }

    /// Cuts one entity's rows into columns chunks at leaf boundaries (`CheckpointColumns.targetRows` rows or about
    /// `targetBytes` of values), keeping each chunk within `maxTargets` relationship targets, and hands each
    /// encoded chunk to `emit`.
    static func writeColumns(
        _ table: EntityTable, entity e: Int, layout: EntityLayout, emit: ([UInt8]) throws -> Void
    ) throws {
        typealias C = CheckpointColumns
        var parts: [C.Part] = []
        var rows = 0
        var bytes = 0
        var targets = 0
        func flush() throws {
            guard !parts.isEmpty else { return }
            let payload = C.encode(entity: e, layout: layout, parts: parts, level: compressionLevel)
            guard payload.count <= JournalFormat.maxRecordBytes else {
                throw TrellisError(.failed, "\(layout.name): a checkpoint chunk of \(payload.count) bytes is too large")
            }
            try emit(payload)
            parts.removeAll(keepingCapacity: true)
            (rows, bytes, targets) = (0, 0, 0)
        }
        try table.forEachLeaf { key, leaf in
            let leafTargets = C.targetCount(leaf, mask: leaf.present)
            if targets + leafTargets > C.maxTargets { try flush() }
            if leafTargets <= C.maxTargets {
                parts.append(C.Part(key: key, leaf: leaf, mask: leaf.present))
                targets += leafTargets
            } else {
                // A leaf with more targets than a chunk may hold goes row by row.
                var m = leaf.present
                while m != 0 {
                    let bit = m & (0 &- m)
                    m &= m - 1
                    let t = C.targetCount(leaf, mask: bit)
                    guard t <= C.maxTargets else {
                        let serial = key << Leaf.shift | UInt64(bit.trailingZeroBitCount)
                        throw TrellisError(
                            .failed,
                            "\(layout.name) \(serial) has \(t) relationship targets; a checkpoint holds at most "
                                + "\(C.maxTargets) an object")
                    }
                    if targets + t > C.maxTargets { try flush() }
                    parts.append(C.Part(key: key, leaf: leaf, mask: bit))
                    targets += t
                }
            }
            rows += leaf.present.nonzeroBitCount
            bytes += C.estimatedBytes(leaf, mask: leaf.present)
            if rows >= C.targetRows || bytes >= C.targetBytes { try flush() }
        }
        try flush()
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

    /// Loads a checkpoint into a new graph of `schema` (nil: the schema the checkpoint holds), checking every chunk, the footer's counts and the end of the
    /// file. Throws a `JournalProblem` naming the file, the offset and the class of any damage (`TrellisError` for
    /// I/O errors).
    /// `manifestBytes`: the size the manifest records for it (nil: none to compare, a manifest inferred from the
    /// files); the file must have exactly that size.
    static func load(_ file: any LayerFile, name: String, schema: Schema?, manifestBytes: UInt64? = nil) throws -> Graph
    {
        try loadReporting(file, name: name, schema: schema, manifestBytes: manifestBytes).graph
    }

    /// What a load did with the stored index orders of a version-3 checkpoint: how many indexes it built from them,
    /// and how many orders it found wrong (not a permutation that sorts the keys) and sorted those indexes instead.
    struct IndexOrderReport: Equatable, Sendable {
        var placed = 0
        var rejected = 0
    }

    /// `load`, also reporting what became of the stored index orders.
    /// `budgetLimit`: the most bytes the load may charge (`LoadBudget`; nil: half of what the process can use).
    static func loadReporting(
        _ file: any LayerFile, name: String, schema: Schema?, manifestBytes: UInt64? = nil, budgetLimit: Int? = nil
    ) throws -> (graph: Graph, orders: IndexOrderReport) {
        let size = try file.size()
        if let manifestBytes, manifestBytes != UInt64(size) {
            throw JournalProblem(
                .manifest, file: JournalFormat.manifestName, offset: 40,
                "the manifest says \(name) has \(manifestBytes) bytes; it has \(size)")
        }
        let header: FileHeader
        do {
            header = try self.header(file, name: name, size: size)
        } catch let error as TrellisError where error.code == .corrupt {
            throw JournalProblem(.header, file: name, offset: 0, error.message)
        }
        func damage(_ kind: JournalProblem.Kind, _ offset: Int, _ message: String) -> JournalProblem {
            JournalProblem(kind, file: name, offset: offset, message)
        }
        // Fingerprints are compared as this build computes them, from the schema the header holds: files of format
        // versions before 4 store a fingerprint that also covered default values.
        let stored: Schema
        do {
            stored = try SchemaCodec.decode(header.schemaBytes, context: name)
        } catch let error as TrellisError where error.code == .corrupt {
            throw damage(.header, 56, error.message)
        }
        let schema = schema ?? stored
        guard stored.fingerprint == schema.fingerprint else {
            throw damage(.schema, 0, "written with schema fingerprint \(stored.fingerprint), not \(schema.fingerprint)")
        }
        // The manifest names a checkpoint by its file name; the graph takes the header's sequence number.
        if let named = JournalFormat.checkpointSequence(name), named != header.sequence {
            throw damage(.header, 24, "holds sequence \(header.sequence) but is named for \(named)")
        }
        // Where the header ends, as segments reckon it (`JournalWalk`): the header read above, encoded.
        let headerEnd = header.encoded().count
        let scanner = FrameScanner(
            file, name: name, size: size, salt: header.salt, otherSalts: [],
            knownTypes: knownTypes(version: header.version), version: header.version)
        let budget = budgetLimit.map { LoadBudget(limit: $0, file: name) } ?? LoadBudget(file: name)
        // The footer's object counts first: a load that cannot fit is refused before it starts, and chunks holding
        // more objects than their footer says stop at the first one over.
        let claims = try footerCounts(
            scanner, file: file, from: headerEnd, size: size, version: header.version, entities: schema.layouts.count)
        if let claims {
            let bytes = zip(claims, schema.layouts).reduce(0.0) { total, entity in
                let each = LoadBudget.objectBytes(
                    values: entity.1.attributes.count, ends: entity.1.relationships.count)
                return total + Double(entity.0) * Double(each)
            }
            try budget.require(bytes, "its footer (\(claims.reduce(0) { $0 &+ $1 }) objects)")
        }
        var reader = ChunkReader(
            scanner: scanner, name: name, version: header.version, schema: schema, offset: headerEnd,
            budget: budget, claims: claims)
        var builder = ChunkBuilder(schema: schema, name: name)
        // One chunk after the other, in one thread: decoding chunk k + 1 on a second thread while this one fills
        // leaves with chunk k costs more in handovers than the overlap saves (figures in trellis-bench's RESULTS.md).
        while true {
            let chunk = try reader.next()
            guard case .footer(let payload, let offset, let frameSize, let context) = chunk else {
                try builder.add(chunk)
                continue
            }
            // The scanner's read window goes before the indexes are built, which is when memory peaks.
            reader.scanner = nil
            let chunks = reader.expected - 2
            var graph = builder.finish(version: header.version)
            do {
                try graph.finishLoading(payload, sequence: header.sequence, chunks: chunks, context: context)
                guard offset + frameSize == size else {
                    throw TrellisError(.corrupt, "\(context): bytes follow the footer")
                }
            } catch let error as TrellisError where error.code == .corrupt {
                throw JournalProblem(.decode, file: name, offset: offset, error.message)
            }
            return (graph, builder.orders)
        }
    }

    /// The object count of each entity from the footer, found by walking the frame headers from `offset` (their
    /// payloads unread) and checked whole like any frame; nil when the walk meets anything but a valid footer ending
    /// the file (damage the load itself will then report where it is).
    static func footerCounts(
        _ scanner: FrameScanner, file: any LayerFile, from offset: Int, size: Int, version: UInt16, entities: Int
    ) throws -> [UInt64]? {
        var offset = offset
        let headerSize = FrameHeader.size(version: version)
        while size - offset >= headerSize {
            let header = FrameHeader(try file.read(at: offset, count: headerSize), version: version)
            guard header.storedLength <= JournalFormat.maxRecordBytes, header.frameSize <= size - offset,
                !header.isAllZero
            else { return nil }
            if offset + header.frameSize < size {
                offset += header.frameSize
                continue
            }
            var scanner = scanner
            guard case .frame(let frame) = try scanner.step(at: offset),
                frame.header.type == RecordType.checkpointFooter.rawValue,
                let payload = try? frame.payload(file: file.path)
            else { return nil }
            var r = ByteReader(payload, context: "footer")
            guard (try? r.varint()) != nil, let n = try? r.count(minimumBytes: 2), n == entities else { return nil }
            var counts: [UInt64] = []
            for _ in 0..<n {
                guard (try? r.varint()) != nil, let count = try? r.varint() else { return nil }
                counts.append(count)
            }
            return counts
        }
        return nil
    }

    /// Reads a checkpoint's frames in order, checking each, and decodes columns chunks (the part of loading that
    /// needs no graph).
    struct ChunkReader {
        /// One frame's contents, with where it starts and how it is named in messages.
        enum Chunk: Sendable {
            case columns(CheckpointColumns.DecodedChunk, offset: Int, context: String)
            case rows([UInt8], offset: Int, context: String)
            case indexOrder(CheckpointIndexOrder.Header, offset: Int, context: String)
            case footer([UInt8], offset: Int, frameSize: Int, context: String)
        }

        var scanner: FrameScanner?
        let name: String
        let version: UInt16
        let schema: Schema
        var offset: Int
        var expected: UInt64 = 1
        /// What the chunks read so far will occupy loaded.
        let budget: LoadBudget
        /// The footer's object count of each entity (nil when the footer could not be read ahead); `loaded`, the
        /// objects of each entity read so far.
        let claims: [UInt64]?
        var loaded: [UInt64] = []

        mutating func next() throws -> Chunk {
            func damage(_ kind: JournalProblem.Kind, _ offset: Int, _ message: String) -> JournalProblem {
                JournalProblem(kind, file: name, offset: offset, message)
            }
            guard let step = try scanner?.step(at: offset) else { throw damage(.length, offset, "no scanner") }
            guard case .frame(let frame) = step else {
                if case .damage(let kind, let message) = step { throw damage(kind, offset, message) }
                throw damage(.length, offset, "the checkpoint ends before its footer")
            }
            // An ignorable frame (a type with bit 7 set that this build does not know) is checked like any other,
            // then skipped: it takes no chunk number and its payload is never read, let alone loaded as data.
            if frame.header.type & RecordType.ignorableBit != 0 {
                offset += frame.extent
                return try next()
            }
            guard frame.header.sequence == expected else {
                throw damage(.sequenceGap, offset, "chunk \(frame.header.sequence) where \(expected) was due")
            }
            expected += 1
            let payload = try frame.payload(file: name)
            let context = "\(name) chunk \(frame.header.sequence) at offset \(offset)"
            let start = offset
            offset += frame.extent
            if frame.header.type == RecordType.checkpointFooter.rawValue {
                return .footer(payload, offset: start, frameSize: frame.extent, context: context)
            }
            if version == 1 {
                // A rows chunk spends at least a byte on every value and end of a row, so its (inflated) bytes
                // bound what it loads: charged 8 bytes each.
                try budget.charge(payload.count * 8, "\(context) (\(payload.count) bytes of rows)")
                return .rows(payload, offset: start, context: context)
            }
            do {
                if frame.header.type == RecordType.checkpointIndexOrder.rawValue {
                    let header = try CheckpointIndexOrder.header(payload, schema: schema, context: context)
                    return .indexOrder(header, offset: start, context: context)
                }
                let chunk = try CheckpointColumns.decode(payload, schema: schema, context: context, budget: budget)
                if let claims {
                    if loaded.isEmpty { loaded = Array(repeating: 0, count: claims.count) }
                    loaded[chunk.entity] += UInt64(chunk.serials.count)
                    guard loaded[chunk.entity] <= claims[chunk.entity] else {
                        throw TrellisError(
                            .corrupt,
                            "\(context): entity \(chunk.entity) has \(loaded[chunk.entity]) objects so far; the footer "
                                + "says \(claims[chunk.entity])")
                    }
                }
                return .columns(chunk, offset: start, context: context)
            } catch let error as TrellisError where error.code == .corrupt {
                throw damage(.decode, start, error.message)
            }
        }
    }

    /// Builds the graph from decoded chunks: bottom-up for columns chunks (`GraphBulkLoader`), row by row for
    /// version-1 rows chunks.
    struct ChunkBuilder {
        let name: String
        var graph: Graph
        var loader: GraphBulkLoader

        init(schema: Schema, name: String) {
            self.name = name
            graph = Graph(schema: schema)
            loader = GraphBulkLoader(schema: schema)
        }

        /// Adds a columns or rows chunk (a footer is `finish`'s).
        mutating func add(_ chunk: ChunkReader.Chunk) throws {
            var at = 0
            do {
                switch chunk {
                case .columns(let decoded, let offset, let context):
                    at = offset
                    try loader.add(decoded, context: context)
                case .rows(let payload, let offset, let context):
                    at = offset
                    try graph.loadRows(payload, context: context)
                case .indexOrder(let header, let offset, let context):
                    at = offset
                    try loader.addOrder(header, context: context)
                case .footer:
                    break
                }
            } catch let error as TrellisError where error.code == .corrupt {
                throw JournalProblem(.decode, file: name, offset: at, error.message)
            }
        }

        /// What the loader did with stored index orders (after `finish`).
        var orders: IndexOrderReport {
            IndexOrderReport(placed: loader.placedIndexes, rejected: loader.rejectedOrders)
        }

        /// The graph, its tables finished (tries and indexes built) when it was loaded from columns chunks.
        mutating func finish(version: UInt16) -> Graph {
            if version >= 2 { graph.tables = loader.finish() }
            // Moved out, so that the caller holds the only reference and finishes it in place.
            var out = Graph(schema: graph.schema)
            swap(&out, &graph)
            return out
        }
    }
}

extension Graph {
    /// Adds the rows of one version-1 checkpoint chunk through the table primitives that commits use (`insertRow`,
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

import Foundation
import TrellisCore
import TrellisGraph

/// One record of a store's journal as its bytes: what replication publishes (`replication-format.md`).
package struct DurableFrame: Sendable, Equatable {
    /// The record's sequence number.
    package var sequence: UInt64
    /// The record's type (change set or migration).
    package var type: UInt8
    /// The format version of the segment it was read from: it decides the frame header's layout.
    package var version: UInt16
    /// The salt of that segment (the frame's checksum covers it).
    package var salt: UInt64
    /// The frame: header and stored payload, without the padding after it. A record of several frames (format version
    /// 9) is all its frames as they lie in the segment, padding between them included, without the padding after the
    /// last.
    package var bytes: [UInt8]
}

/// Reads the records of a store another writer appends to (in this process or another) as frame bytes, after a given
/// sequence number and as far as the writer's durable mark, no further: a record a crash can take back is never read.
/// It applies nothing; it checks each frame as recovery does (checksum under the segment's salt, the sequence number
/// due). The segment it reads stays open until read to its end, so a compaction's unlink cannot take records it has
/// yet to read; records a compaction removed before it looked are reported as `historyCompacted`.
///
/// Not thread-safe: one reader per thread (the publisher's).
package final class DurableFrameReader {
    struct Segment {
        var id: UInt64
        var name: String
        var file: any LayerFile
        var salt: UInt64
        var version: UInt16
        var firstSequence: UInt64
        var offset: Int
    }

    let layer: any FileLayer
    let directory: String
    /// The sequence number of the last record read.
    package private(set) var last: UInt64
    private var current: Segment?

    /// A reader of the store in `directory` that starts with record `after` + 1.
    package init(directory: String, after: UInt64, layer: any FileLayer = StoreOptions().fileLayer) {
        self.layer = layer
        self.directory = directory
        self.last = after
    }

    deinit { current?.file.close() }

    /// The durable target now: the greater of the manifest's durable sequence and the writer's mark (when the mark
    /// names a segment under the salt the reader holds it by, if it holds it).
    package func durableSequence() throws -> UInt64 {
        try target().sequence
    }

    private func target() throws -> (sequence: UInt64, mark: DurableMark?, manifest: Manifest) {
        let bytes = try layer.readWhole(
            joinPath(directory, JournalFormat.manifestName), limit: JournalFormat.maxHeaderBytes)
        let manifest = try Manifest.parse(bytes, file: JournalFormat.manifestName)
        var sequence = manifest.durableSequence
        let mark = DurableMark.read(layer, directory: directory)
        if let mark, !(current?.id == mark.segment && current?.salt != mark.salt) {
            sequence = max(sequence, mark.sequence)
        }
        return (sequence, mark, manifest)
    }

    /// The durable records after the last one read, at most `limit` of them, in order (none when nothing new is
    /// durable). Throws `historyCompacted` when the next record is no longer in the journal, `corrupt` for damage.
    package func next(limit: Int) throws -> [DurableFrame] {
        let (target, mark, manifest) = try target()
        var frames: [DurableFrame] = []
        guard last < target else { return frames }
        if current == nil { current = try locate(manifest: manifest) }
        while frames.count < limit, last < target, var segment = current {
            let end = mark.flatMap {
                $0.sequence >= target && $0.segment == segment.id && $0.salt == segment.salt
                    ? Int(clamping: $0.offset) : nil
            }
            try read(&segment, upTo: end, through: target, limit: limit, into: &frames)
            current = segment
            if frames.count >= limit || last >= target { break }
            // Nothing more durable here: the next record is the first of the next segment, unless a compaction removed
            // it before the reader got there.
            let next: Segment
            do {
                next = try Self.openSegment(layer: layer, directory: directory, id: segment.id + 1)
            } catch let error as TrellisError where error.code == .io {
                let now = try Manifest.parse(
                    try layer.readWhole(
                        joinPath(directory, JournalFormat.manifestName), limit: JournalFormat.maxHeaderBytes),
                    file: JournalFormat.manifestName)
                guard now.firstSegment > segment.id + 1 else { break }
                throw TrellisError(
                    .historyCompacted,
                    "\(directory): record \(last + 1) is no longer in the journal (a compaction removed it)")
            }
            guard next.firstSequence == last + 1 else {
                next.file.close()
                throw TrellisError(
                    .corrupt,
                    "\(directory)/\(next.name): starts at record \(next.firstSequence) where \(last + 1) was due")
            }
            segment.file.close()
            current = next
        }
        return frames
    }

    /// Closes the segment it holds open.
    package func close() {
        current?.file.close()
        current = nil
    }

    /// Opens the segment holding record `last` + 1, positioned at it.
    private func locate(manifest: Manifest) throws -> Segment {
        var found: Segment?
        // Segments before the manifest's first are the history a retention keeps (`HISTORY`): read them too, down to
        // the first one missing.
        for id in stride(from: manifest.lastSegment, through: 1, by: -1) {
            let segment: Segment
            do {
                segment = try Self.openSegment(layer: layer, directory: directory, id: id)
            } catch let error as TrellisError where error.code == .io && id < manifest.firstSegment {
                break
            }
            if segment.firstSequence <= last + 1 {
                found = segment
                break
            }
            segment.file.close()
        }
        guard var segment = found else {
            throw TrellisError(
                .historyCompacted,
                "\(directory): record \(last + 1) is no longer in the journal (a compaction removed it)")
        }
        // Frames before the one due are passed over.
        var skipped: [DurableFrame] = []
        let due = last
        last = segment.firstSequence - 1
        if due > last {
            do {
                try read(&segment, upTo: nil, through: due, limit: Int.max, into: &skipped, keep: false)
            } catch {
                segment.file.close()
                throw error
            }
        }
        guard last == due else {
            segment.file.close()
            throw TrellisError(.corrupt, "\(directory)/\(segment.name): record \(due) is not there to resume after")
        }
        return segment
    }

    static func openSegment(layer: any FileLayer, directory: String, id: UInt64) throws -> Segment {
        let name = JournalFormat.segmentName(id)
        let file = try layer.open(joinPath(directory, name), .read)
        do {
            let header = try readSegmentHeader(file, name: name, size: try file.size())
            return Segment(
                id: id, name: name, file: file, salt: header.salt, version: header.version,
                firstSequence: header.sequence, offset: header.encoded().count)
        } catch {
            file.close()
            throw error
        }
    }

    /// Reads frames from the segment's offset, before `end`, while they are records through `target`.
    private func read(
        _ segment: inout Segment, upTo end: Int?, through target: UInt64, limit: Int, into frames: inout [DurableFrame],
        keep: Bool = true
    ) throws {
        let size = try segment.file.size()
        var scanner = FrameScanner(
            segment.file, name: segment.name, size: min(size, end ?? size), salt: segment.salt, otherSalts: [],
            knownTypes: [RecordType.changeSet.rawValue, RecordType.migration.rawValue], version: segment.version)
        while last < target, frames.count < limit {
            switch try scanner.step(at: segment.offset) {
            case .end, .damage:
                // The end of what is durable here (reserved zeros, or a record being written past the mark).
                return
            case .frame(let frame):
                let frameSize = frame.extent
                if frame.header.type & RecordType.ignorableBit != 0 {
                    segment.offset += frameSize
                    continue
                }
                guard frame.header.sequence == last + 1 else {
                    throw TrellisError(
                        .corrupt,
                        "\(directory)/\(segment.name) at offset \(frame.offset): record \(frame.header.sequence) where "
                            + "\(last + 1) was due")
                }
                if keep {
                    let last = frame.continuations.last?.header ?? frame.header
                    let length = frameSize - (last.frameSize - last.size - last.storedLength)
                    let bytes = try segment.file.read(at: frame.offset, count: length)
                    guard bytes.count == length else {
                        throw TrellisError(.io, "\(directory)/\(segment.name): short read at offset \(frame.offset)")
                    }
                    frames.append(
                        DurableFrame(
                            sequence: frame.header.sequence, type: frame.header.type, version: segment.version,
                            salt: segment.salt, bytes: bytes))
                }
                last = frame.header.sequence
                segment.offset += frameSize
            }
        }
    }
}

extension DurableFrame {
    /// A frame received as bytes (from a replication stream): checked as recovery checks a frame (whole, checksum
    /// under `salt`, a known type and codec, no flags) before anything reads it; throws `.corrupt` otherwise.
    package init(received bytes: [UInt8], version: UInt16, salt: UInt64, context: String) throws {
        guard (1...JournalFormat.version).contains(version) else {
            throw TrellisError(.corrupt, "\(context): format version \(version) is unknown to this build")
        }
        let frame = try Self.frame(bytes, version: version, salt: salt, context: context)
        let header = frame.header
        self.init(sequence: header.sequence, type: header.type, version: version, salt: salt, bytes: bytes)
    }

    /// The record in `bytes`, each of its frames checked as recovery checks one (whole, checksum under `salt`, a
    /// record's type, plausible lengths, fragment flags that chain: format version 10); throws `.corrupt` otherwise.
    static func frame(_ bytes: [UInt8], version: UInt16, salt: UInt64, context: String) throws -> Frame {
        let headerSize = FrameHeader.size(version: version)
        var first: Frame?
        var offset = 0
        while true {
            guard bytes.count - offset >= headerSize else {
                throw TrellisError(.corrupt, "\(context): \(bytes.count - offset) bytes are not a frame")
            }
            let header = FrameHeader(bytes[offset..<(offset + headerSize)], version: version)
            let end = offset + headerSize + header.storedLength
            guard header.storedLength <= JournalFormat.maxRecordBytes, end <= bytes.count,
                header.hasMoreFragments ? RecordFrame.align(end) < bytes.count : end == bytes.count,
                RecordFrame.checksum(
                    salt: salt, header: bytes[(offset + 4)..<(offset + headerSize)],
                    stored: bytes[(offset + headerSize)..<end]) == header.checksum
            else {
                throw TrellisError(.corrupt, "\(context): the frame's length or checksum does not check out")
            }
            guard header.type == RecordType.changeSet.rawValue || header.type == RecordType.migration.rawValue,
                header.flags & ~FrameHeader.knownFlags(version: version) == 0, FrameScanner.plausibleLengths(header)
            else {
                throw TrellisError(.corrupt, "\(context): record type \(header.type) or its lengths are not a record's")
            }
            let stored = Array(bytes[(offset + headerSize)..<end])
            if var record = first {
                guard header.isContinuation, header.sequence == record.header.sequence,
                    header.type == record.header.type, header.time == record.header.time,
                    header.watermark == record.header.watermark
                else { throw TrellisError(.corrupt, "\(context): a frame that does not continue the record") }
                record.continuations.append(Frame.Fragment(offset: offset, header: header, stored: stored))
                first = record
            } else {
                guard !header.isContinuation else {
                    throw TrellisError(.corrupt, "\(context): a record that starts with a continuing frame")
                }
                first = Frame(offset: 0, header: header, stored: stored)
            }
            guard header.hasMoreFragments else { return first! }
            guard bytes[end..<RecordFrame.align(end)].allSatisfy({ $0 == 0 }) else {
                throw TrellisError(.corrupt, "\(context): nonzero padding between frames")
            }
            offset = RecordFrame.align(end)
        }
    }

    /// Whether the record is a migration (the writer changed the schema).
    package var isMigration: Bool { type == RecordType.migration.rawValue }

    /// The change set of a change-set record, decoded against `schema` as recovery decodes it.
    package func changeSet(schema: Schema, context: String) throws -> (changes: ChangeSet, author: String?) {
        guard !isMigration else {
            throw TrellisError(.schemaMismatch, "\(context): the writer migrated the store to another schema")
        }
        let frame = try Self.frame(bytes, version: version, salt: salt, context: context)
        return try ChangeSetCodec.decodeRecord(
            try frame.payload(file: context), schema: schema, context: context, version: version)
    }
}

extension DurableFrame {
    /// The graph after a migration record received from a replication stream, applied to `graph` (the store's
    /// version before it, of sequence number `sequence` − 1) as recovery applies one: every stage, then the schema's
    /// history gains the record's entry (dated by the frame's commit time), as the writer's segment header holds it.
    /// Returns that graph and the decoded record.
    package func migrated(_ graph: Graph, context: String) throws -> (graph: Graph, record: MigrationRecord) {
        guard isMigration else {
            throw TrellisError(.corrupt, "\(context): a change set where a migration was expected")
        }
        guard graph.sequence + 1 == sequence else {
            throw TrellisError(.corrupt, "\(context): record \(graph.sequence + 1) was due")
        }
        let headerSize = FrameHeader.size(version: version)
        let header = FrameHeader(bytes[0..<headerSize], version: version)
        let frame = Frame(offset: 0, header: header, stored: Array(bytes[headerSize...]))
        let record = try MigrationRecord.decode(try frame.payload(file: context), base: graph.schema, context: context)
        guard record.from == graph.schema.fingerprint, record.stages.last?.schema.fingerprint == record.to else {
            throw TrellisError(
                .schemaMismatch,
                "\(context): a migration from schema \(JournalFormat.hex16(record.from)) where the replica's is "
                    + "\(JournalFormat.hex16(graph.schema.fingerprint))")
        }
        let after = try record.apply(to: graph, sequence: sequence)
        let history =
            graph.schema.history + [
                record.summary(sequence: sequence, date: RecordFrame.date(header.time))
            ]
        return (after.withSchema(after.schema.withHistory(history)), record)
    }
}

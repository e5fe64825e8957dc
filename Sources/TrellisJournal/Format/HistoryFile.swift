import Foundation
import TrellisCore

/// The `HISTORY` file (format version 7): the store's identity, the history kept beyond what the manifest needs, and
/// what each named consumer of the history has acknowledged. Replaced atomically, like the manifest.
///
/// ```
/// magic   \x89 T R H \r \n ^Z \n          u16 version 7     u16 flags 0     u32 length of the whole file
/// 16      store id (random, never changes)
/// count   bases, oldest first, then each: varint checkpoint sequence c (0: the empty graph before record 1),
///         varint first segment id f (segment f starts at c + 1), zigzag microseconds when c became a checkpoint
/// count   consumers, then each: string name, varint acknowledged sequence, zigzag microseconds of the acknowledgement
/// policy  the retention of the last compaction: varint commits + 1 (0: no rule), varint seconds + 1 (0: no rule),
///         count consumer names, then each a string
/// u32     CRC-32 of every byte before it
/// ```
package struct HistoryFile: Sendable, Equatable {
    /// A version of the graph history can start from: the checkpoint (or the empty graph) and the segments after it.
    package struct Base: Sendable, Equatable {
        /// The checkpoint's sequence number; 0 for the empty graph before the first record.
        package var checkpoint: UInt64
        /// The segment whose first record is `checkpoint + 1`.
        package var firstSegment: UInt64
        /// When the compaction that made the checkpoint ran (microseconds since 1970): every record up to
        /// `checkpoint` is at least this old.
        package var time: Int64

        package init(checkpoint: UInt64, firstSegment: UInt64, time: Int64) {
            self.checkpoint = checkpoint
            self.firstSegment = firstSegment
            self.time = time
        }
    }

    /// A consumer's acknowledgement: it has read every record up to `sequence`.
    package struct Acknowledgement: Sendable, Equatable {
        package var sequence: UInt64
        package var time: Int64
    }

    package var storeID: UUID
    /// Retained bases, oldest first; the last is the manifest's own (its checkpoint and first segment) after the
    /// compaction that wrote it. Empty: nothing is kept beyond the manifest's journal.
    package var bases: [Base] = []
    package var consumers: [String: Acknowledgement] = [:]
    /// The retention rule in force at the last compaction that wrote the file (what `trellis info` says history is
    /// kept for).
    package var retention = HistoryRetention.none

    package static let name = "HISTORY"
    static let magic: [UInt8] = [0x89, 0x54, 0x52, 0x48, 0x0D, 0x0A, 0x1A, 0x0A]  // \x89 T R H
    static let version: UInt16 = 7
    static let maxBytes = 16 << 20

    package init(storeID: UUID = UUID()) { self.storeID = storeID }

    package func encoded() -> [UInt8] {
        var bytes = ByteWriter.bytes(estimate: 64 + bases.count * 24 + consumers.count * 48) { w in
            w.append(Self.magic)
            w.u16(Self.version)
            w.u16(0)
            w.u32(0)  // the length, set below
            withUnsafeBytes(of: storeID.uuid) { w.append($0) }
            w.varint(bases.count)
            for base in bases {
                w.varint(base.checkpoint)
                w.varint(base.firstSegment)
                w.signed(base.time)
            }
            w.varint(consumers.count)
            for (name, ack) in consumers.sorted(by: { $0.key < $1.key }) {
                w.string(name)
                w.varint(ack.sequence)
                w.signed(ack.time)
            }
            w.varint(retention.commits.map { UInt64(max($0, 0)) + 1 } ?? 0)
            w.varint(retention.duration.map { UInt64(max($0, 0).rounded(.up)) + 1 } ?? 0)
            w.varint(retention.consumers.count)
            for name in retention.consumers.sorted() { w.string(name) }
        }
        let length = UInt32(bytes.count + 4)
        for k in 0..<4 { bytes[12 + k] = UInt8(truncatingIfNeeded: length >> (8 * UInt32(k))) }
        let crc = Zlib.crc32(0, bytes[...])
        for k in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: crc >> (8 * UInt32(k)))) }
        return bytes
    }

    /// Parses a `HISTORY` file; throws `.corrupt` (naming the file) for anything that does not check out.
    package static func parse(_ bytes: [UInt8], file: String = name) throws(TrellisError) -> HistoryFile {
        guard bytes.count >= 40, Array(bytes[0..<8]) == magic else {
            throw TrellisError(.corrupt, "\(file): not a Trellis history file (bad magic or too short)")
        }
        var r = ByteReader(bytes, from: 8, context: file)
        let version = try r.u16()
        guard version == Self.version else {
            throw TrellisError(.corrupt, "\(file): history file version \(version); this build reads version 7")
        }
        guard try r.u16() == 0, try r.u32() == UInt32(bytes.count) else {
            throw TrellisError(.corrupt, "\(file): unknown flags, or a length that is not the file's")
        }
        let stored = try ByteReader(bytes, from: bytes.count - 4, context: file).peekU32()
        guard Zlib.crc32(0, bytes[0..<(bytes.count - 4)]) == stored else {
            throw TrellisError(.corrupt, "\(file): history file checksum mismatch")
        }
        var body = ByteReader(Array(bytes[0..<(bytes.count - 4)]), from: 16, context: file)
        var id = [UInt8]()
        for _ in 0..<16 { id.append(try body.u8()) }
        let uuid = UUID(
            uuid: (
                id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7], id[8], id[9], id[10], id[11], id[12], id[13],
                id[14], id[15]
            ))
        var history = HistoryFile(storeID: uuid)
        let bases = try body.count(minimumBytes: 3)
        for _ in 0..<bases {
            let base = Base(checkpoint: try body.varint(), firstSegment: try body.varint(), time: try body.signed())
            if let last = history.bases.last,
                base.checkpoint <= last.checkpoint || base.firstSegment < last.firstSegment
            {
                throw body.failure("history bases out of order")
            }
            history.bases.append(base)
        }
        let consumers = try body.count(minimumBytes: 3)
        for _ in 0..<consumers {
            let name = try body.string()
            history.consumers[name] = Acknowledgement(sequence: try body.varint(), time: try body.signed())
        }
        let commits = try body.varint()
        let seconds = try body.varint()
        history.retention.commits = commits == 0 ? nil : Int(clamping: commits - 1)
        history.retention.duration = seconds == 0 ? nil : TimeInterval(seconds - 1)
        for _ in 0..<(try body.count()) { history.retention.consumers.insert(try body.string()) }
        guard body.isAtEnd else { throw body.failure("\(body.remaining) unexpected trailing bytes") }
        return history
    }

    /// Reads the directory's `HISTORY` file; nil when there is none.
    package static func read(_ layer: any FileLayer, _ directory: String) throws -> HistoryFile? {
        let path = joinPath(directory, name)
        guard layer.exists(path).exists else { return nil }
        return try parse(try layer.readWhole(path, limit: maxBytes))
    }

    /// Replaces the directory's `HISTORY` file (temporary name, sync, rename, directory sync).
    package func write(_ layer: any FileLayer, _ directory: String) throws {
        try layer.writeAtomically(encoded(), to: joinPath(directory, Self.name), directory: directory)
    }

    /// The checkpoints and the first segment history keeps on disk beside the manifest's.
    package var keptCheckpoints: Set<UInt64> { Set(bases.map(\.checkpoint).filter { $0 > 0 }) }
    package var firstKeptSegment: UInt64? { bases.first?.firstSegment }
}

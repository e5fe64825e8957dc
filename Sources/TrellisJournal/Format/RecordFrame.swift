import Foundation
import TrellisCore
import TrellisGraph

/// Frames payloads into records (compressing when it pays) and computes their salted checksums.
package enum RecordFrame {
    /// Payloads shorter than this are stored as they are: setting up a deflate stream costs more than the few bytes
    /// it would save on a one-object commit.
    static let minimumCompressedPayload = 512

    static func align(_ n: Int) -> Int { (n + JournalFormat.alignment - 1) & ~(JournalFormat.alignment - 1) }

    /// Payloads at least this long are deflated with Huffman codes only: on a big commit, string matching costs
    /// several times as long for a few percent of the bytes, all of it while the save waits. They are stored deflated
    /// only when that saves at least 1/`largeSavingFraction` of their bytes.
    static let huffmanOnlyPayload = 64 << 10

    /// A large payload is stored deflated only when deflate at least halves it. A large record is on its commit's
    /// path, and Huffman coding costs it more time than writing and syncing the bytes it saves; compaction compresses
    /// everything anyway.
    static let largeSavingFraction = 2

    /// Bytes of a large payload deflated first, in four pieces spread over it, to predict whether the whole would
    /// save enough; the whole is deflated only when the sample does.
    static let sampleBytes = 64 << 10

    /// Frames a payload, compressing it with zlib at `level` when that makes it smaller (nil: never), in the frame
    /// layout of format `version` (from version 6 the header carries `watermark`, the last record known durable).
    package static func encode(
        type: RecordType, payload: [UInt8], sequence: UInt64, time: Int64, salt: UInt64, compressionLevel: Int32?,
        watermark: UInt64 = 0, version: UInt16 = JournalFormat.version
    ) -> [UInt8] {
        let parts = frameParts(
            type: type, payload: payload, sequence: sequence, time: time, salt: salt,
            compressionLevel: compressionLevel,
            watermark: watermark, version: version)
        return ByteWriter.bytes(estimate: parts.header.count + parts.stored.count + parts.padding) { w in
            w.append(parts.header)
            w.append(parts.stored)
            w.pad(to: JournalFormat.alignment)
        }
    }

    /// A frame in its three parts, which follow one another on disk: the header (`FrameHeader.size(version:)`
    /// bytes, checksum included), the stored payload, and `padding` zero bytes up to the alignment. `encode` joins
    /// them; the flusher writes a big record's parts one after the other instead, so its payload is not copied into a
    /// frame first. A watermark is written only in the layout of version 6 and later (older frames have no room).
    static func frameParts(
        type: RecordType, payload: [UInt8], sequence: UInt64, time: Int64, salt: UInt64, compressionLevel: Int32?,
        watermark: UInt64 = 0, version: UInt16 = JournalFormat.version
    ) -> (header: [UInt8], stored: [UInt8], padding: Int) {
        let headerSize = FrameHeader.size(version: version)
        var stored = payload
        var codec = RecordCodec.none
        if let level = compressionLevel, payload.count >= minimumCompressedPayload,
            let packed = deflated(payload, level: level)
        {
            stored = packed
            codec = .zlib
        }
        let header = ByteWriter.bytes(estimate: headerSize) { w in
            w.u32(0)
            w.u32(UInt32(stored.count))
            w.u8(type.rawValue)
            w.u8(codec.rawValue)
            w.u16(0)
            w.u32(UInt32(payload.count))
            w.u64(sequence)
            w.u64(UInt64(bitPattern: time))
            if headerSize > 32 { w.u64(watermark) }
            w.setU32(checksum(salt: salt, header: w.written(4..<headerSize), stored: stored), at: 0)
        }
        let length = headerSize + stored.count
        return (header, stored, align(length) - length)
    }

    /// The payload deflated, or nil when that would not save enough: any saving for a small payload; for a large one
    /// (`huffmanOnlyPayload` and more, deflated with Huffman codes only) at least 1/`largeSavingFraction`, tried on a
    /// sample first.
    static func deflated(_ payload: [UInt8], level: Int32) -> [UInt8]? {
        guard payload.count >= huffmanOnlyPayload else { return Zlib.compress(payload, level: level) }
        func limit(_ n: Int) -> Int { n - n / largeSavingFraction }
        if payload.count > 2 * sampleBytes {
            let piece = sampleBytes / 4
            var sample: [UInt8] = []
            sample.reserveCapacity(sampleBytes)
            for k in 0..<4 {
                let start = (payload.count - piece) * k / 3
                sample += payload[start..<(start + piece)]
            }
            guard Zlib.compress(sample, level: level, strategy: .huffmanOnly, limit: limit(sample.count)) != nil
            else { return nil }
        }
        return Zlib.compress(payload, level: level, strategy: .huffmanOnly, limit: limit(payload.count))
    }

    static func checksum(salt: UInt64, header: some Collection<UInt8>, stored: some Collection<UInt8>) -> UInt32 {
        let seeded = withUnsafeBytes(of: salt.littleEndian) { Zlib.crc32(0, $0) }
        return Zlib.crc32(Zlib.crc32(seeded, header), stored)
    }

    package static func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    package static func date(_ microseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
    }
}

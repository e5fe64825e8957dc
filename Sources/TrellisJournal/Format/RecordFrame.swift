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

    /// Where a record a save waits for (`.perCommit` durability, at the default level 1) counts as large, with the
    /// rules above: level 1 takes longer to deflate such a record on the flusher than writing and syncing the bytes it
    /// saves (see journal-format.md).
    static let durableLargePayload = 16 << 10

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
        watermark: UInt64 = 0, version: UInt16 = JournalFormat.version, flags: UInt16 = 0,
        largeFrom: Int = huffmanOnlyPayload
    ) -> (header: [UInt8], stored: [UInt8], padding: Int) {
        let headerSize = FrameHeader.size(version: version)
        var stored = payload
        var codec = RecordCodec.none
        if let level = compressionLevel, payload.count >= minimumCompressedPayload,
            let packed = deflated(payload, level: level, largeFrom: largeFrom)
        {
            stored = packed
            codec = .zlib
        }
        let header = ByteWriter.bytes(estimate: headerSize) { w in
            w.u32(0)
            w.u32(UInt32(stored.count))
            w.u8(type.rawValue)
            w.u8(codec.rawValue)
            w.u16(flags)
            w.u32(UInt32(payload.count))
            w.u64(sequence)
            w.u64(UInt64(bitPattern: time))
            if headerSize > 32 { w.u64(watermark) }
            w.setU32(checksum(salt: salt, header: w.written(4..<headerSize), stored: stored), at: 0)
        }
        let length = headerSize + stored.count
        return (header, stored, align(length) - length)
    }

    /// Where the frames of a record cut its payload, given as pieces that follow one another: consecutive pieces go
    /// into one frame while together they hold at most `fragmentBytes` (a piece alone is used as it is, without a
    /// copy), and a piece larger than that is cut into frames of `fragmentBytes`. Each element lists the (piece,
    /// range) parts of one frame's payload, in order; a record of no bytes is one empty frame.
    static func fragmentPlan(_ pieces: [[UInt8]], fragmentBytes: Int) -> [[(piece: Int, range: Range<Int>)]] {
        precondition(fragmentBytes > 0, "fragmentBytes must be positive")
        var plan: [[(piece: Int, range: Range<Int>)]] = []
        var current: [(piece: Int, range: Range<Int>)] = []
        var currentBytes = 0
        for (i, piece) in pieces.enumerated() where !piece.isEmpty {
            if currentBytes + piece.count <= fragmentBytes {
                current.append((i, 0..<piece.count))
                currentBytes += piece.count
                continue
            }
            if !current.isEmpty {
                plan.append(current)
                (current, currentBytes) = ([], 0)
            }
            var start = 0
            while piece.count - start > fragmentBytes {
                plan.append([(i, start..<(start + fragmentBytes))])
                start += fragmentBytes
            }
            current = [(i, start..<piece.count)]
            currentBytes = piece.count - start
        }
        if !current.isEmpty || plan.isEmpty { plan.append(current) }
        return plan
    }

    /// The payload of one frame of `fragmentPlan`: the piece itself when it is one whole piece, else a copy.
    static func fragmentPayload(_ pieces: [[UInt8]], _ parts: [(piece: Int, range: Range<Int>)]) -> [UInt8] {
        if parts.count == 1, parts[0].range == pieces[parts[0].piece].indices { return pieces[parts[0].piece] }
        var out: [UInt8] = []
        out.reserveCapacity(parts.reduce(0) { $0 + $1.range.count })
        for part in parts { out += pieces[part.piece][part.range] }
        return out
    }

    /// Frames a record whose payload is `pieces`, one after the other, as one frame or (format version 10, when it is
    /// larger than `fragmentBytes`) as several, and hands each frame's parts to `body` in order, one at a time: a big
    /// record is compressed and written a fragment at a time and never copied into one buffer. All its frames carry
    /// the same type, sequence number, time and watermark; flags say first, middle or last. A segment older than
    /// version 10 takes one frame whatever the size (its writer rotates before a record that needs more).
    static func forEachFrame(
        type: RecordType, pieces: [[UInt8]], fragmentBytes: Int, sequence: UInt64, time: Int64, salt: UInt64,
        compressionLevel: Int32?, watermark: UInt64, version: UInt16, largeFrom: Int = huffmanOnlyPayload,
        _ body: (_ header: [UInt8], _ stored: [UInt8], _ padding: Int) throws -> Void
    ) rethrows {
        let total = pieces.reduce(0) { $0 + $1.count }
        let limit = version >= JournalFormat.fragmentVersion ? fragmentBytes : max(total, 1)
        let plan = fragmentPlan(pieces, fragmentBytes: max(limit, 1))
        for (k, parts) in plan.enumerated() {
            var flags: UInt16 = 0
            if k > 0 { flags |= FrameHeader.continuesRecord }
            if k < plan.count - 1 { flags |= FrameHeader.moreFragments }
            let parts = frameParts(
                type: type, payload: fragmentPayload(pieces, parts), sequence: sequence, time: time, salt: salt,
                compressionLevel: compressionLevel, watermark: watermark, version: version, flags: flags,
                largeFrom: largeFrom)
            try body(parts.header, parts.stored, parts.padding)
        }
    }

    /// The frames of a record whose payload is `pieces` (see `forEachFrame`), joined.
    static func encode(
        type: RecordType, pieces: [[UInt8]], fragmentBytes: Int, sequence: UInt64, time: Int64, salt: UInt64,
        compressionLevel: Int32?, watermark: UInt64 = 0, version: UInt16 = JournalFormat.version
    ) -> [UInt8] {
        var out: [UInt8] = []
        forEachFrame(
            type: type, pieces: pieces, fragmentBytes: fragmentBytes, sequence: sequence, time: time, salt: salt,
            compressionLevel: compressionLevel, watermark: watermark, version: version
        ) { header, stored, padding in
            if out.isEmpty && padding == 0 && stored.isEmpty {
                out = header
                return
            }
            out.reserveCapacity(out.count + header.count + stored.count + padding)
            out += header
            out += stored
            out += repeatElement(0, count: padding)
        }
        return out
    }

    /// The payload deflated, or nil when that would not save enough: any saving for a small payload; for a large one
    /// (`largeFrom` bytes and more, deflated with Huffman codes only) at least 1/`largeSavingFraction`, judged
    /// first by counting bytes (`Zlib.huffmanBytesAtLeast`), and for a payload of more than two samples by a sample.
    static func deflated(_ payload: [UInt8], level: Int32, largeFrom: Int = huffmanOnlyPayload) -> [UInt8]? {
        guard payload.count >= largeFrom else { return Zlib.compress(payload, level: level) }
        func limit(_ n: Int) -> Int { n - n / largeSavingFraction }
        if payload.count > 2 * sampleBytes {
            let piece = sampleBytes / 4
            var sample: [UInt8] = []
            sample.reserveCapacity(sampleBytes)
            for k in 0..<4 {
                let start = (payload.count - piece) * k / 3
                sample += payload[start..<(start + piece)]
            }
            guard sample.withUnsafeBufferPointer(Zlib.huffmanBytesAtLeast) < limit(sample.count),
                Zlib.compress(sample, level: level, strategy: .huffmanOnly, limit: limit(sample.count)) != nil
            else { return nil }
        } else {
            // Up to two samples' worth the whole payload is counted, which costs less than deflating a sample of it.
            guard payload.withUnsafeBufferPointer(Zlib.huffmanBytesAtLeast) < limit(payload.count) else { return nil }
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

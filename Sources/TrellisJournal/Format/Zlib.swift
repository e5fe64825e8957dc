import CZlib
import Dispatch
import Foundation
import Synchronization
import TrellisCore
import TrellisGraph

/// The system zlib, wrapped: the one file where the journal hands buffers to C for checksums and compression.
enum Zlib {
    /// CRC-32 (IEEE) of `bytes`, continuing from `crc` (start with 0).
    static func crc32(_ crc: UInt32, _ bytes: some Collection<UInt8>) -> UInt32 {
        let result = bytes.withContiguousStorageIfAvailable { buffer -> UInt32 in
            update(crc, buffer)
        }
        if let result { return result }
        return Array(bytes).withUnsafeBufferPointer { update(crc, $0) }
    }

    private static func update(_ crc: UInt32, _ buffer: UnsafeBufferPointer<UInt8>) -> UInt32 {
        var crc = uLong(crc)
        var base = buffer.baseAddress
        var left = buffer.count
        // zlib takes a 32-bit length; feed larger buffers in pieces.
        while left > 0, let b = base {
            let n = min(left, 1 << 30)
            crc = CZlib.crc32(crc, b, uInt(n))
            base = b + n
            left -= n
        }
        return UInt32(truncatingIfNeeded: crc)
    }

    /// How deflate looks for redundancy. Every strategy writes an ordinary zlib stream: inflate reads them all.
    enum Strategy {
        /// Repeated strings (LZ77) and Huffman codes: smallest, slowest.
        case standard
        /// Huffman codes for single bytes only, no string matching: about 2.5 times as fast at level 1 on the
        /// journal's records, which are mostly random numbers and short texts, for about 6% more bytes.
        case huffmanOnly

        var raw: Int32 { self == .standard ? Z_DEFAULT_STRATEGY : Z_HUFFMAN_ONLY }
    }

    /// Inputs at least this long are deflated in pieces on several threads when the strategy is `.huffmanOnly`.
    static let parallelInput = 1 << 20

    /// The zlib stream (deflate with a 2-byte header and an Adler-32 trailer, which inflate checks) of `bytes`, or
    /// nil when it would not be shorter than `limit` bytes (default: the input's length).
    ///
    /// With `.huffmanOnly`, an input of `parallelInput` bytes or more is cut into one piece per core (at most 4),
    /// deflated at once: Huffman coding keeps no window across bytes, so the pieces lose nothing by being coded apart.
    /// Each piece but the last ends with a sync flush (a byte-aligned empty stored block), so their deflate blocks
    /// simply follow one another in one ordinary zlib stream, which `inflate` reads like any other.
    static func compress(_ bytes: [UInt8], level: Int32, strategy: Strategy = .standard, limit: Int? = nil) -> [UInt8]?
    {
        guard !bytes.isEmpty, bytes.count < Int(UInt32.max) else { return nil }
        var pieces = 1
        if strategy == .huffmanOnly, bytes.count >= Self.parallelInput {
            pieces = max(
                1, min(4, ProcessInfo.processInfo.activeProcessorCount, bytes.count / (Self.parallelInput / 2)))
        }
        return compressInPieces(bytes, pieces: pieces, level: level, strategy: strategy, limit: limit ?? bytes.count)
    }

    /// `compress` in `pieces` pieces, deflated concurrently when there are several (see there); internal so tests can
    /// choose the count.
    static func compressInPieces(
        _ bytes: [UInt8], pieces: Int, level: Int32, strategy: Strategy, limit: Int? = nil
    ) -> [UInt8]? {
        guard !bytes.isEmpty, pieces >= 1 else { return nil }
        let size = (bytes.count + pieces - 1) / pieces
        let parts = Mutex<[(bytes: [UInt8], adler: uLong)?]>(Array(repeating: nil, count: pieces))
        bytes.withUnsafeBufferPointer { all in
            nonisolated(unsafe) let all = all
            @Sendable func piece(_ k: Int) {
                let piece = UnsafeBufferPointer(rebasing: all[(k * size)..<min(all.count, (k + 1) * size)])
                guard let deflated = deflateRaw(piece, level: level, strategy: strategy, last: k == pieces - 1)
                else { return }
                let adler = CZlib.adler32(1, piece.baseAddress, uInt(piece.count))
                parts.locked { $0[k] = (deflated, adler) }
            }
            if pieces == 1 {
                piece(0)
            } else {
                DispatchQueue.concurrentPerform(iterations: pieces) { k in piece(k) }
            }
        }
        let done = parts.locked { $0 }.compactMap { $0 }
        guard done.count == pieces else { return nil }
        var total = 2 + 4
        for part in done { total += part.bytes.count }
        guard total < (limit ?? bytes.count) else { return nil }
        var out = header(level: level)
        out.reserveCapacity(total)
        var adler = done[0].adler
        for (k, part) in done.enumerated() {
            out += part.bytes
            if k > 0 {
                let length = min(bytes.count, (k + 1) * size) - k * size
                adler = adler32_combine(adler, part.adler, off_t(length))
            }
        }
        let check = UInt32(truncatingIfNeeded: adler)
        out += [UInt8(check >> 24), UInt8(check >> 16 & 0xff), UInt8(check >> 8 & 0xff), UInt8(check & 0xff)]
        return out
    }

    /// Literals in one block of Huffman-only deflate: with memory level 8, zlib ends a block when its symbol buffer of
    /// 2^14 − 1 entries is full, and codes each block with a Huffman code of its own.
    static let huffmanBlockLiterals = (1 << 14) - 1

    /// A lower bound on the length of the zlib stream that `compress(…, strategy: .huffmanOnly)` makes of `bytes` in
    /// one piece: no prefix code spends fewer bits on a block than the entropy of its byte counts, or than a bit a
    /// byte, and each block has one code. Counting bytes is far cheaper than deflating them, so an input that cannot
    /// shrink enough is turned away without being deflated.
    static func huffmanBytesAtLeast(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        withUnsafeTemporaryAllocation(of: Int.self, capacity: 256) { counts in
            var bits = 0.0
            var blocks = 0
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + huffmanBlockLiterals)
                counts.initialize(repeating: 0)
                for i in start..<end { counts[Int(bytes[i])] &+= 1 }
                // n·log2(n) − Σ c·log2(c) is the block's entropy in bits: Σ c·log2(n / c).
                let n = Double(end - start)
                var sum = 0.0
                for c in counts where c > 1 { sum += Double(c) * log2(Double(c)) }
                // Every code is at least a bit long (the end-of-block code takes one too).
                bits += max(n * log2(n) - sum, n)
                blocks += 1
                start = end
            }
            // Header and Adler-32 trailer; a byte a block off for the floating-point sums, so it never overshoots.
            return max(6, 6 + Int(bits / 8) - blocks)
        }
    }

    /// The 2-byte zlib header zlib itself writes for `level`: CMF 0x78 (deflate, 32 KiB window), then FLG with the
    /// level's class (informational) and the check bits that make the pair a multiple of 31.
    static func header(level: Int32) -> [UInt8] {
        let levelClass: UInt16 =
            switch level {
            case 6, Z_DEFAULT_COMPRESSION: 2
            case ...1: 0
            case 2...5: 1
            default: 3
            }
        let unchecked: UInt16 = 0x7800 | levelClass << 6
        let check = (31 - unchecked % 31) % 31
        return [0x78, UInt8(truncatingIfNeeded: (unchecked | check) & 0xff)]
    }

    /// Raw deflate (no header, no trailer) of one piece: `last` finishes the stream; otherwise the piece ends with a
    /// sync flush, on a byte boundary, so the next piece's blocks can follow.
    private static func deflateRaw(
        _ input: UnsafeBufferPointer<UInt8>, level: Int32, strategy: Strategy, last: Bool
    ) -> [UInt8]? {
        var stream = z_stream()
        guard
            deflateInit2_(
                &stream, level, Z_DEFLATED, -MAX_WBITS, 8, strategy.raw, zlibVersion(),
                Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return nil }
        defer { deflateEnd(&stream) }
        // The bound covers a finished stream; a sync flush adds an empty stored block (at most 5 bytes) instead.
        var out = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))) + 16)
        let (status, produced) = out.withUnsafeMutableBufferPointer { o -> (Int32, Int) in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = uInt(input.count)
            stream.next_out = o.baseAddress
            stream.avail_out = uInt(o.count)
            let status = deflate(&stream, last ? Z_FINISH : Z_SYNC_FLUSH)
            return (status, o.count - Int(stream.avail_out))
        }
        guard last ? status == Z_STREAM_END : (status == Z_OK && stream.avail_in == 0 && stream.avail_out > 0)
        else { return nil }
        out.removeLast(out.count - produced)
        return out
    }

    /// Inflates a zlib stream that must produce exactly `count` bytes and end exactly at the end of `bytes`; nil
    /// when it does not (damage: bytes after the stream's end are bytes no reader would check).
    static func decompress(_ bytes: ArraySlice<UInt8>, count: Int) -> [UInt8]? {
        guard count > 0, count < Int(UInt32.max) else { return nil }
        var out = [UInt8](repeating: 0, count: count)
        var produced = uLong(count)
        var consumed = uLong(bytes.count)
        let status = out.withUnsafeMutableBufferPointer { o in
            bytes.withUnsafeBufferPointer { i in
                uncompress2(o.baseAddress, &produced, i.baseAddress, &consumed)
            }
        }
        guard status == Z_OK, Int(produced) == count, Int(consumed) == bytes.count else { return nil }
        return out
    }
}

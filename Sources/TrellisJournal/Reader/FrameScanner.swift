import Foundation
import TrellisCore
import TrellisGraph

/// What is at one offset of a segment or checkpoint body.
enum ScanStep {
    case end
    case frame(Frame)
    case damage(JournalProblem.Kind, String)
}

/// Reads frames one at a time from a file body, checking each completely (bounds, checksum, type) before anyone
/// uses it, and finds the next valid frame after damage.
struct FrameScanner {
    var window: FileWindow
    let file: String
    let salt: UInt64
    /// Salts of the store's other files, to tell a stale frame (class `.salt`) from plain damage.
    let otherSalts: [UInt64]
    let knownTypes: Set<UInt8>
    /// The format version of the file: it decides the frame header's layout (`FrameHeader.size(version:)`).
    let version: UInt16
    /// The size of a frame header in this file.
    let headerSize: Int
    /// Payload bytes the search for a valid frame after damage has hashed, and whether it gave up: each candidate
    /// offset may claim the rest of the file, so without a bound the search costs the square of the file's size.
    private(set) var resyncHashed = 0
    private(set) var resyncGaveUp = false
    /// Where the last damage `step(at:)` reported was found: the record's start, or the frame of a record of several
    /// frames that failed (the rot test looks at that frame).
    private(set) var damagedFrame = 0

    init(
        _ file: any LayerFile, name: String, size: Int, salt: UInt64, otherSalts: [UInt64], knownTypes: Set<UInt8>,
        version: UInt16
    ) {
        self.window = FileWindow(file, size: size)
        self.version = version
        self.headerSize = FrameHeader.size(version: version)
        self.file = name
        self.salt = salt
        self.otherSalts = otherSalts
        self.knownTypes = knownTypes
    }

    var size: Int { window.size }

    /// The record at `offset`: one frame, or (version 10) a first frame and the frames that continue it, each checked
    /// completely. A record cut short (a frame of it damaged, or the file ending before its last frame) is damage at
    /// the record's start, of the class of what stopped it (`length` when the file ends): a torn multi-frame record is
    /// a torn tail like a torn frame. `charging`: the search after damage counts every continuing frame's bytes
    /// against its budget, and gives up (damage) when it is spent.
    mutating func step(at offset: Int, charging: Bool = false) throws -> ScanStep {
        damagedFrame = offset
        let first = try stepFrame(at: offset)
        guard case .frame(var frame) = first else { return first }
        if frame.header.isContinuation {
            return .damage(
                .decode,
                "record \(frame.header.sequence) at offset \(offset) continues a record, but a record starts here")
        }
        var at = offset + frame.header.frameSize
        var last = frame.header
        while last.hasMoreFragments {
            let k = frame.frameCount + 1
            let what = "frame \(k) of record \(frame.header.sequence) (at offset \(at))"
            if charging {
                resyncHashed += Self.peekLength(&window, at: at, version: version) * (1 + otherSalts.count)
                guard resyncHashed <= resyncBudget else {
                    resyncGaveUp = true
                    return .damage(.length, "\(what): the search gave up")
                }
            }
            switch try stepFrame(at: at) {
            case .end:
                damagedFrame = at
                return .damage(.length, "the file ends before \(what)")
            case .damage(let kind, let message):
                damagedFrame = at
                return .damage(kind, "\(what): \(message)")
            case .frame(let next):
                let h = next.header
                guard h.isContinuation, h.type == frame.header.type, h.sequence == frame.header.sequence,
                    h.time == frame.header.time, h.watermark == frame.header.watermark
                else {
                    damagedFrame = at
                    return .damage(
                        .decode,
                        "\(what) does not continue it (flags 0x\(String(h.flags, radix: 16)), record \(h.sequence), "
                            + "type \(h.type))")
                }
                frame.continuations.append(Frame.Fragment(offset: at, header: h, stored: next.stored))
                at += h.frameSize
                last = h
            }
        }
        return .frame(frame)
    }

    /// The stored length a frame header at `offset` claims (0 when there is no header there), for the search's budget.
    private static func peekLength(_ window: inout FileWindow, at offset: Int, version: UInt16) -> Int {
        let headerSize = FrameHeader.size(version: version)
        guard offset + headerSize <= window.size, let bytes = try? window.bytes(at: offset, count: headerSize),
            bytes.count == headerSize
        else { return 0 }
        return min(FrameHeader(bytes, version: version).storedLength, JournalFormat.maxRecordBytes)
    }

    /// The one frame at `offset`, checked completely.
    private mutating func stepFrame(at offset: Int) throws -> ScanStep {
        let left = size - offset
        if left <= 0 { return .end }
        if left < headerSize {
            let tail = try window.bytes(at: offset, count: left)
            return tail.allSatisfy({ $0 == 0 })
                ? .damage(.zeroed, "\(left) zero bytes") : .damage(.length, "a partial frame header of \(left) bytes")
        }
        // A file may be shorter than when its size was taken (a writer dropping a torn tail while a reader looks).
        let frameStart = try window.bytes(at: offset, count: headerSize)
        guard frameStart.count == headerSize else {
            return .damage(.length, "the file ends inside a frame header (it shrank while being read)")
        }
        let header = FrameHeader(frameStart, version: version)
        if header.isAllZero { return .damage(.zeroed, "a zeroed frame header") }
        // The whole frame, padding included, must be there: a frame cut short even in its padding was torn by a
        // write that never completed, so no sync (and no acknowledgement) can have covered it.
        guard header.storedLength <= JournalFormat.maxRecordBytes, header.frameSize <= left else {
            return .damage(
                .length,
                "stored length \(header.storedLength) exceeds the \(left - headerSize) bytes left in the file")
        }
        // The header's bytes first, from the window that holds them: reading the payload may move the window past
        // them, and reading them after it read the window again (a second 1 MiB read for every window of a file).
        let headerBytes = try window.bytes(at: offset + 4, count: headerSize - 4)
        let stored = try window.bytes(at: offset + headerSize, count: header.storedLength)
        let expected = RecordFrame.checksum(salt: salt, header: headerBytes, stored: stored)
        guard expected == header.checksum else {
            for other in otherSalts where other != salt {
                if RecordFrame.checksum(salt: other, header: headerBytes, stored: stored) == header.checksum {
                    return .damage(.salt, "a valid record of another file (salt \(other)) in sequence position")
                }
            }
            return .damage(.checksum, "checksum mismatch for record \(header.sequence) of \(header.storedLength) bytes")
        }
        guard knownTypes.contains(header.type) || header.type & RecordType.ignorableBit != 0 else {
            return .damage(.unknownType, "record type \(header.type) is unknown to this build")
        }
        guard RecordCodec(rawValue: header.codec) != nil else {
            return .damage(.unknownType, "compression codec \(header.codec) is unknown to this build")
        }
        guard Self.plausibleLengths(header) else {
            return .damage(.length, "uncompressed length \(header.uncompressedLength) is impossible")
        }
        // Every byte is checked: the flags are covered by the checksum, and a flag beyond the fragment bits (version
        // 9) is a feature this build does not know; the padding is outside the checksum, so it must be zero.
        guard header.flags & ~FrameHeader.knownFlags(version: version) == 0 else {
            return .damage(
                .unknownType,
                "frame flags 0x\(String(header.flags, radix: 16)) name a feature this build does not know")
        }
        let padding = header.frameSize - headerSize - header.storedLength
        if padding > 0 {
            let pad = try window.bytes(at: offset + headerSize + header.storedLength, count: padding)
            guard pad.allSatisfy({ $0 == 0 }) else {
                return .damage(.length, "nonzero bytes in the padding after record \(header.sequence)")
            }
        }
        return .frame(Frame(offset: offset, header: header, stored: Array(stored)))
    }

    /// Whether the uncompressed length can be right: equal to the stored one without a codec; with zlib at most
    /// the record limit, 1100:1, and 256:1 above 1 MiB (see `JournalFormat.maxLargeCompressionRatio`).
    static func plausibleLengths(_ header: FrameHeader) -> Bool {
        guard let codec = RecordCodec(rawValue: header.codec) else { return false }
        if codec == .none { return header.uncompressedLength == header.storedLength }
        let s = header.storedLength
        let u = header.uncompressedLength
        guard u <= min(JournalFormat.maxRecordBytes, s * JournalFormat.maxCompressionRatio + 64) else { return false }
        return u <= JournalFormat.largeInflateBytes || u <= s * JournalFormat.maxLargeCompressionRatio
    }

    /// Whether every byte from `offset` to the end of the file is zero.
    mutating func isZero(from offset: Int) throws -> Bool {
        var at = offset
        while at < size {
            let n = min(size - at, 1 << 16)
            guard Self.allZero(try window.bytes(at: at, count: n)) else { return false }
            at += n
        }
        return true
    }

    /// A block of zeros to compare against.
    private static let zeros = [UInt8](repeating: 0, count: 4_096)

    /// Whether every byte of `bytes` is zero. `memcmp` against a zero block rather than a loop over the bytes: every
    /// open checks the preallocated tail of the last segment (up to 256 KiB), and a byte loop costs milliseconds there
    /// in a debug build.
    static func allZero(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.withUnsafeBytes { raw in
            zeros.withUnsafeBytes { zero in
                var at = 0
                while at < raw.count {
                    let n = min(raw.count - at, zero.count)
                    if memcmp(raw.baseAddress! + at, zero.baseAddress!, n) != 0 { return false }
                    at += n
                }
                return true
            }
        }
    }

    /// The unit a torn write is made of: disks write 512-byte sectors whole or not at all (aligned to file offsets
    /// here; a 4 KiB sector is eight of them, so the rule holds for it too).
    static let sectorSize = 512
    /// The largest payload searched for one flipped bit (eight table steps a byte).
    static let bitFlipSearchLimit = 64 << 10

    /// Why the frame at `offset`, which failed its checksum and is the last thing in the file, is rot rather than a
    /// torn write; nil when it may be torn. A write cut short over zeros (reserved space, or past the old end of the
    /// file) leaves a zero sector part or a zero last byte; rot is a frame that is whole (header and length plausible,
    /// all of it in the file, nothing but zeros after it) and either one flipped bit from checking out, or without
    /// any of those signs of a tear (`journal-format.md`, Recovery step 4).
    mutating func rot(at offset: Int) throws -> String? {
        let left = size - offset
        guard left >= headerSize else { return nil }
        if let flipped = try lengthRot(at: offset) { return flipped }
        let header = FrameHeader(try window.bytes(at: offset, count: headerSize), version: version)
        guard !header.isAllZero, header.storedLength <= JournalFormat.maxRecordBytes, header.frameSize <= left else {
            return nil
        }
        let extent = headerSize + header.storedLength
        guard try isZero(from: offset + extent) else { return nil }
        let frame = Array(try window.bytes(at: offset, count: extent))
        guard frame.count == extent else { return nil }
        // A sector part of zeros is what a sector that never reached the disk leaves: torn.
        guard Self.hasNoZeroSector(frame, at: offset) else { return nil }
        // One flipped bit that makes it check out is rot even when the record ends in a zero byte (most change sets
        // do). The checked message is the salt, header bytes 4..<H and the payload; a flip in the salt would be
        // the file header's damage, so only the frame's own bytes are searched. A torn record matches by chance
        // with odds of 8 × its bytes in 2³², hence the limit.
        let message = withUnsafeBytes(of: salt.littleEndian) { Array($0) } + frame[4...]
        let difference = Zlib.crc32(0, message) ^ header.checksum
        // A record that checks out (damaged elsewhere: its padding) is not this rule's.
        guard difference != 0 else { return nil }
        if header.storedLength <= Self.bitFlipSearchLimit {
            var flipped: (offset: Int, bit: Int)?
            if difference.nonzeroBitCount == 1 {
                flipped = (offset + difference.trailingZeroBitCount / 8, difference.trailingZeroBitCount % 8)
            } else if let found = BitFlipSearch.find(
                message: message, searched: 8..<message.count, difference: difference)
            {
                flipped = (offset + 4 + found.index - 8, found.bit)
            }
            if let flipped {
                return "one flipped bit (bit \(flipped.bit) of the byte at offset \(flipped.offset)) in a whole record "
                    + "\(header.sequence) of \(header.storedLength) bytes: rot, not a torn write"
            }
        }
        // A write cut at any byte over zeros leaves a zero last byte.
        guard frame[extent - 1] != 0 else { return nil }
        return "record \(header.sequence) of \(header.storedLength) bytes is whole, fails its checksum, has no zero "
            + "sector and ends in a non-zero byte: rot, not a torn write"
    }

    /// A whole last record with one bit of its stored length flipped: the length read is wrong, so the record fails
    /// its checksum (or seems to run past the file), and the search for a flipped bit among the bytes that length
    /// names cannot find it. Tries each of the 32 bits: the record is rot when, with that bit flipped back, it fits
    /// the file, checks out, has no all-zero sector and only zeros follow it. A torn record passes with odds of 32
    /// in 2³²; payloads above `bitFlipSearchLimit` are not tried, as in `rot(at:)`.
    private mutating func lengthRot(at offset: Int) throws -> String? {
        let bytes = try window.bytes(at: offset, count: headerSize)
        guard bytes.count == headerSize else { return nil }
        let stored = FrameHeader(bytes, version: version)
        for bit in 0..<32 {
            let length = stored.storedLength ^ (1 << bit)
            guard length <= Self.bitFlipSearchLimit, RecordFrame.align(headerSize + length) <= size - offset else {
                continue
            }
            let extent = headerSize + length
            let frame = Array(try window.bytes(at: offset, count: extent))
            guard frame.count == extent else { continue }
            var header = Array(frame[4..<headerSize])
            for i in 0..<4 { header[i] = UInt8(truncatingIfNeeded: length >> (8 * i)) }
            guard RecordFrame.checksum(salt: salt, header: header, stored: frame[headerSize...]) == stored.checksum,
                try isZero(from: offset + extent)
            else { continue }
            guard Self.hasNoZeroSector(frame, at: offset) else { continue }
            return "one flipped bit (bit \(bit % 8) of the byte at offset \(offset + 4 + bit / 8)) in the length of a "
                + "whole record \(stored.sequence) of \(length) bytes (it reads \(stored.storedLength)): rot, not a "
                + "torn write"
        }
        return nil
    }

    /// Whether every 512-byte sector (aligned to file offsets) has a nonzero byte in its part of `frame`, which
    /// starts at file offset `offset`.
    private static func hasNoZeroSector(_ frame: [UInt8], at offset: Int) -> Bool {
        var start = offset / sectorSize * sectorSize
        while start < offset + frame.count {
            let part = frame[(max(start, offset) - offset)..<(min(start + sectorSize, offset + frame.count) - offset)]
            if part.allSatisfy({ $0 == 0 }) { return false }
            start += sectorSize
        }
        return true
    }

    /// At most this many payload bytes are hashed by all the searches for a valid frame in one file: four times its
    /// size and 1 MiB, so a search costs time linear in the file's size however its damage was crafted.
    var resyncBudget: Int { 4 * size + (1 << 20) }

    /// The offset of the first valid frame after `offset`, trying every aligned position; nil when none follows, or
    /// when the search gave up (`resyncGaveUp`: its budget of hashed bytes is spent, so it cannot say none follows).
    /// Cheap tests (lengths, type, codec, flags, sequence) go first, so the checksum runs on few candidates. Only
    /// where a record starts counts (version 10: not a frame that continues one), and only a whole record.
    mutating func nextValidFrame(after offset: Int) throws -> Int? {
        var candidate = RecordFrame.align(offset + 1)
        while candidate + headerSize <= size {
            defer { candidate += JournalFormat.alignment }
            let headerBytes = try window.bytes(at: candidate, count: headerSize)
            guard headerBytes.count == headerSize else { return nil }
            let header = FrameHeader(headerBytes, version: version)
            guard !header.isAllZero, header.storedLength <= JournalFormat.maxRecordBytes,
                header.frameSize <= size - candidate,
                header.flags & ~FrameHeader.knownFlags(version: version) == 0, !header.isContinuation,
                Self.plausibleLengths(header),
                knownTypes.contains(header.type) || header.type & RecordType.ignorableBit != 0
            else { continue }
            resyncHashed += header.storedLength * (1 + otherSalts.count)
            guard resyncHashed <= resyncBudget else {
                resyncGaveUp = true
                return nil
            }
            let found = try step(at: candidate, charging: true)
            if resyncGaveUp { return nil }
            if case .frame = found { return candidate }
        }
        return nil
    }
}

import TrellisCore
import TrellisGraph

/// A piece of damage found in a store directory, classified, with the file and byte offset where it starts.
///
/// The journal reader reports problems; what to do about them (stop, drop a torn tail, skip) is the caller's policy
/// (`StoreOptions.Recovery`, or the `trellis` tool).
///
/// ```swift
/// for problem in try JournalReader(directory: url).verify().problems {
///     print(problem)   // segment-0000000000000002.trj at 4096: checksum: …
/// }
/// ```
public struct JournalProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The class of the damage.
    public enum Kind: String, Sendable, CaseIterable {
        /// The last segment ends in a partial or damaged record with nothing valid after it: what a crash during an
        /// append leaves. Recovery drops (and backs up) these bytes by default.
        case tornTail = "torn tail"
        /// A record's checksum does not match its bytes.
        case checksum
        /// A length that cannot be right: larger than the maximum record size or than the bytes left in the file.
        case length
        /// A run of zero bytes where a record should start (preallocated or zeroed space).
        case zeroed
        /// A record whose sequence number is not the previous one + 1, or a segment that does not continue where the
        /// one before ended.
        case sequenceGap = "sequence gap"
        /// A record that checks out only under another file's salt: a stale frame from somewhere else.
        case salt
        /// A record type or codec this build does not know and may not skip.
        case unknownType = "unknown type"
        /// A file the manifest names is not there.
        case missingFile = "missing file"
        /// A store file that the manifest does not reference.
        case orphanFile = "orphan file"
        /// A file header (magic, version, checksum) that does not check out.
        case header
        /// The manifest is missing, truncated or fails its checksum.
        case manifest
        /// A record whose bytes check out but do not decode, or do not apply to the graph.
        case decode
        /// The file was written with a different schema.
        case schema
    }

    public var kind: Kind
    /// The file's name within the store directory.
    public var file: String
    /// The byte offset in `file` where the damage starts.
    public var offset: Int
    /// What exactly is wrong, for people.
    public var message: String

    public init(_ kind: Kind, file: String, offset: Int, _ message: String) {
        self.kind = kind
        self.file = file
        self.offset = offset
        self.message = message
    }

    public var description: String { "\(file) at offset \(offset): \(kind.rawValue): \(message)" }
}

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

    init(_ file: any LayerFile, name: String, size: Int, salt: UInt64, otherSalts: [UInt64], knownTypes: Set<UInt8>) {
        self.window = FileWindow(file, size: size)
        self.file = name
        self.salt = salt
        self.otherSalts = otherSalts
        self.knownTypes = knownTypes
    }

    var size: Int { window.size }

    mutating func step(at offset: Int) throws -> ScanStep {
        let left = size - offset
        if left <= 0 { return .end }
        if left < FrameHeader.size {
            let tail = try window.bytes(at: offset, count: left)
            return tail.allSatisfy({ $0 == 0 })
                ? .damage(.zeroed, "\(left) zero bytes") : .damage(.length, "a partial frame header of \(left) bytes")
        }
        // A file may be shorter than when its size was taken (a writer dropping a torn tail while a reader looks).
        let frameStart = try window.bytes(at: offset, count: FrameHeader.size)
        guard frameStart.count == FrameHeader.size else {
            return .damage(.length, "the file ends inside a frame header (it shrank while being read)")
        }
        let header = FrameHeader(frameStart)
        if header.isAllZero { return .damage(.zeroed, "a zeroed frame header") }
        // The whole frame, padding included, must be there: a frame cut short even in its padding was torn by a
        // write that never completed, so no sync (and no acknowledgement) can have covered it.
        guard header.storedLength <= JournalFormat.maxRecordBytes, header.frameSize <= left else {
            return .damage(
                .length,
                "stored length \(header.storedLength) exceeds the \(left - FrameHeader.size) bytes left in the file")
        }
        // The header's bytes first, from the window that holds them: reading the payload may move the window past
        // them, and reading them after it read the window again (a second 1 MiB read for every window of a file).
        let headerBytes = try window.bytes(at: offset + 4, count: FrameHeader.size - 4)
        let stored = try window.bytes(at: offset + FrameHeader.size, count: header.storedLength)
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
        guard let codec = RecordCodec(rawValue: header.codec) else {
            return .damage(.unknownType, "compression codec \(header.codec) is unknown to this build")
        }
        let ratioBound = header.storedLength * JournalFormat.maxCompressionRatio + 64
        let plausible =
            codec == .none
            ? header.uncompressedLength == header.storedLength
            : header.uncompressedLength <= min(JournalFormat.maxRecordBytes, ratioBound)
        guard plausible else {
            return .damage(.length, "uncompressed length \(header.uncompressedLength) is impossible")
        }
        return .frame(Frame(offset: offset, header: header, stored: Array(stored)))
    }

    /// Whether every byte from `offset` to the end of the file is zero.
    mutating func isZero(from offset: Int) throws -> Bool {
        var at = offset
        while at < size {
            let n = min(size - at, 1 << 16)
            guard try window.bytes(at: at, count: n).allSatisfy({ $0 == 0 }) else { return false }
            at += n
        }
        return true
    }

    /// The offset of the first valid frame after `offset`, trying every aligned position; nil when none follows.
    /// Cheap tests (lengths, type, codec) go first, so the checksum runs on few candidates.
    mutating func nextValidFrame(after offset: Int) throws -> Int? {
        var candidate = RecordFrame.align(offset + 1)
        while candidate + FrameHeader.size <= size {
            defer { candidate += JournalFormat.alignment }
            let headerBytes = try window.bytes(at: candidate, count: FrameHeader.size)
            guard headerBytes.count == FrameHeader.size else { return nil }
            let header = FrameHeader(headerBytes)
            guard !header.isAllZero, header.storedLength <= JournalFormat.maxRecordBytes,
                header.frameSize <= size - candidate,
                header.flags == 0, RecordCodec(rawValue: header.codec) != nil,
                knownTypes.contains(header.type) || header.type & RecordType.ignorableBit != 0
            else { continue }
            if case .frame = try step(at: candidate) { return candidate }
        }
        return nil
    }
}

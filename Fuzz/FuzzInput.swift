@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// How the fuzzer's bytes are read:
///
///     byte 0   target: 0 manifest, 1 checkpoint, 2 segment, 3 a whole store directory
///     byte 1   bit 0: make every checksum right before reading (so mutations reach the decoders behind them)
///     rest     the file (targets 0–2), or a directory: entries of [name index: 1][length: 2, LE][bytes]
///
/// Directory name indexes: 0 MANIFEST, 1–3 segments 1–3, 4 the checkpoint (named for the sequence number in its
/// header), 5 MANIFEST.tmp, 6 a temporary segment.
struct FuzzInput {
    enum Target: UInt8 {
        case manifest = 0
        case checkpoint = 1
        case segment = 2
        case directory = 3
    }

    var target: Target
    var fixChecksums: Bool
    var body: [UInt8]

    init(_ bytes: [UInt8]) {
        target = Target(rawValue: (bytes.first ?? 0) % 4)!
        fixChecksums = bytes.count > 1 && bytes[1] & 1 != 0
        body = bytes.count > 2 ? Array(bytes[2...]) : []
    }

    /// The directory entries of a `.directory` input: names and contents (later entries of a name win).
    func files() -> [(name: String, bytes: [UInt8])] {
        var out: [(String, [UInt8])] = []
        var i = 0
        while i + 3 <= body.count {
            let index = Int(body[i]) % 7
            let length = Int(body[i + 1]) | Int(body[i + 2]) << 8
            let start = i + 3
            let end = min(body.count, start + length)
            out.append((Self.name(index, Array(body[start..<end])), Array(body[start..<end])))
            i = end
        }
        return out
    }

    static func name(_ index: Int, _ bytes: [UInt8]) -> String {
        switch index {
        case 0: return JournalFormat.manifestName
        case 1, 2, 3: return JournalFormat.segmentName(UInt64(index))
        case 4:
            var sequence: UInt64 = 1
            if bytes.count >= 32 {
                var r = ByteReader(bytes, from: 24, context: "fuzz")
                sequence = (try? r.u64()) ?? 1
            }
            return JournalFormat.checkpointName(sequence)
        case 5: return JournalFormat.manifestName + JournalFormat.temporarySuffix
        default: return JournalFormat.segmentName(4) + JournalFormat.temporarySuffix
        }
    }
}

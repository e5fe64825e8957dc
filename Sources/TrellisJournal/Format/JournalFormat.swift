import TrellisCore
import TrellisGraph

/// Constants of the on-disk format, version 10 (`journal-format.md` at the repository root explains each choice).
package enum JournalFormat {
    /// The version this build writes. Versions 2 and 3 changed only the checkpoint: columnar chunks (record type 4),
    /// then stored index order (record type 5); version 4 added migration records; version 5 changed only the
    /// manifest (the durable sequence, every byte under its checksum); version 6 added the synced-through watermark
    /// to every frame header (40 bytes instead of 32), which lets point-in-time recovery tell an unacknowledged hole;
    /// version 7 ends every change-set record with the commit's author and adds the `HISTORY` file (retention);
    /// version 8 adds collection attributes (types 15 to 17) and their value tag (12), and ordered to-many
    /// relationships (a schema byte, the `place` edit, list-ordered checkpoint links); version 9 adds metadata
    /// attributes (type 19, `[String: MetadataValue]`), whose lists mix null, Booleans, numbers and strings; version 10 lets one record
    /// span several frames (`fragmentVersion`).
    static let version: UInt16 = 10
    /// The versions this build reads: version-1 checkpoints load through the row decoder they were written for,
    /// version-2 checkpoints rebuild every index by sorting, and segments and manifests of versions 1 and 2 are byte
    /// for byte what version 3 writes.
    static let readableVersions: ClosedRange<UInt16> = 1...version
    /// What a refusal of another version says this build reads.
    static var readableDescription: String {
        "this build reads versions \(readableVersions.lowerBound) to \(readableVersions.upperBound)"
    }
    /// PNG-style magics: a high byte first (catches 7-bit transfers), a name, CR LF (catches line-ending
    /// conversion), ^Z and LF.
    package static let segmentMagic: [UInt8] = [0x89, 0x54, 0x52, 0x4A, 0x0D, 0x0A, 0x1A, 0x0A]  // \x89 T R J
    static let checkpointMagic: [UInt8] = [0x89, 0x54, 0x52, 0x43, 0x0D, 0x0A, 0x1A, 0x0A]  // \x89 T R C
    static let manifestMagic: [UInt8] = [0x89, 0x54, 0x52, 0x4D, 0x0D, 0x0A, 0x1A, 0x0A]  // \x89 T R M

    package static let manifestName = "MANIFEST"
    package static let lockName = "LOCK"
    static let temporarySuffix = ".tmp"
    /// What repair and salvage add to the name of a file whose bytes they stop using (a hard link; never removed).
    static let damagedSuffix = ".damaged"
    static let segmentPrefix = "segment-"
    static let segmentSuffix = ".trj"
    static let checkpointPrefix = "checkpoint-"
    static let checkpointSuffix = ".trc"

    /// Every record starts on a multiple of 8, so its 8-byte checksum-and-length word never straddles a sector and
    /// is written whole or not at all.
    static let alignment = 8
    /// The largest stored or uncompressed payload of one frame a reader accepts (a damage check: from
    /// `fragmentVersion` on, a record larger than a frame is written as several).
    static let maxRecordBytes = 512 << 20
    /// The first version whose records may span several frames (flags `FrameHeader.moreFragments` and
    /// `FrameHeader.continuesRecord`): older files never hold one, and a record that needs several frames is written
    /// only to a segment of this version or later.
    static let fragmentVersion: UInt16 = 10
    /// The payload bytes of one frame of a record written as several (`StoreOptions.fragmentBytes` by default): small
    /// enough that a writer or reader handles one fragment at a time in bounded memory, big enough that the 40 bytes of
    /// each frame header are nothing.
    package static let defaultFragmentBytes = 16 << 20
    /// deflate cannot expand more than about 1032:1; a claimed uncompressed size beyond that is damage, and refusing
    /// it bounds what a damaged length can make the reader allocate.
    static let maxCompressionRatio = 1100
    /// A frame inflating to more than `largeInflateBytes` may expand at most `maxLargeCompressionRatio`:1. Writers
    /// deflate records of 64 KiB and more with Huffman codes only (at most 8:1) and small ones at level 1 (at most
    /// about 230:1), so only a crafted frame goes beyond; without the bound a 400 KB file could inflate to gigabytes.
    static let largeInflateBytes = 1 << 20
    static let maxLargeCompressionRatio = 256
    /// Sequence numbers (and segment ids, generations) at or above this are damage: far beyond any real store, and
    /// it keeps the chain's `+ 1` from wrapping 2^64 - 1 to 0.
    static let sequenceLimit: UInt64 = 1 << 60
    /// The largest header (schema included) and manifest a reader accepts.
    static let maxHeaderBytes = 16 << 20

    package static func segmentName(_ id: UInt64) -> String { segmentPrefix + hex16(id) + segmentSuffix }
    static func checkpointName(_ sequence: UInt64) -> String { checkpointPrefix + hex16(sequence) + checkpointSuffix }

    package static func hex16(_ v: UInt64) -> String {
        let digits = String(v, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }

    /// The id in a segment file name, or nil for any other name.
    static func segmentID(_ name: String) -> UInt64? { number(name, segmentPrefix, segmentSuffix) }

    /// The sequence number in a checkpoint file name, or nil for any other name.
    static func checkpointSequence(_ name: String) -> UInt64? { number(name, checkpointPrefix, checkpointSuffix) }

    private static func number(_ name: String, _ prefix: String, _ suffix: String) -> UInt64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.count == prefix.count + 16 + suffix.count else {
            return nil
        }
        return UInt64(name.dropFirst(prefix.count).prefix(16), radix: 16)
    }
}

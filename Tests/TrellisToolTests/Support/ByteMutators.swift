import Foundation

/// Damage made by hand, byte by byte, on a store's files (the layout is journal-format.md's): truncation, a
/// flipped byte, a rewritten field with its checksum recomputed, frames cut out or spliced in.
struct StoreFile {
    let url: URL

    init(_ directory: URL, _ name: String) { url = directory.appendingPathComponent(name) }

    func bytes() throws -> [UInt8] { [UInt8](try Data(contentsOf: url)) }

    func write(_ bytes: [UInt8]) throws { try Data(bytes).write(to: url) }

    func truncate(to size: Int) throws { try write(Array(try bytes().prefix(size))) }

    /// Sets a version-5 manifest's durable sequence (offset 64) to 0 and fixes its checksum: the store as a crash
    /// after its last commits leaves it, rather than a clean close (after which a cut tail is a vanished tail).
    static func forgetCleanClose(_ store: URL) throws { try setDurableSequence(store, 0) }

    /// Rewrites the manifest's durable sequence (offset 64) and its checksum.
    static func setDurableSequence(_ store: URL, _ sequence: UInt64) throws {
        let manifest = StoreFile(store, "MANIFEST")
        var b = try manifest.bytes()
        for i in 64..<72 { b[i] = UInt8(truncatingIfNeeded: sequence >> (8 * UInt64(i - 64))) }
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in b[0..<72] {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        crc ^= 0xFFFF_FFFF
        for i in 0..<4 { b[72 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
        try manifest.write(b)
    }

    func flip(at offset: Int) throws {
        var b = try bytes()
        b[offset] ^= 0x5A
        try write(b)
    }

    func setU32(_ value: UInt32, at offset: Int) throws {
        var b = try bytes()
        for i in 0..<4 { b[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) }
        try write(b)
    }

    func setU8(_ value: UInt8, at offset: Int) throws {
        var b = try bytes()
        b[offset] = value
        try write(b)
    }

    /// Removes `count` bytes at `offset` (a whole frame, to make a sequence gap).
    func cut(at offset: Int, count: Int) throws {
        var b = try bytes()
        b.removeSubrange(offset..<(offset + count))
        try write(b)
    }

    func insert(_ inserted: [UInt8], at offset: Int) throws {
        var b = try bytes()
        b.insert(contentsOf: inserted, at: offset)
        try write(b)
    }

    /// The file's salt: the segment header's u64 at offset 32.
    func salt() throws -> [UInt8] { Array(try bytes()[32..<40]) }

    /// The size of a frame header in this file: 40 bytes from format version 6 (the watermark), 32 before.
    func frameHeaderSize() throws -> Int { try bytes()[8] >= 6 ? 40 : 32 }

    /// Recomputes the checksum of the frame at `offset` after a header field was changed on purpose: CRC-32 of the
    /// salt, header bytes 4..<H and the stored payload, at the frame's first four bytes.
    func resealFrame(at offset: Int) throws {
        let b = try bytes()
        let h = try frameHeaderSize()
        let stored = Int(b[offset + 4]) | Int(b[offset + 5]) << 8 | Int(b[offset + 6]) << 16 | Int(b[offset + 7]) << 24
        let covered = try salt() + Array(b[(offset + 4)..<(offset + h + stored)])
        try setU32(CRC32.checksum(covered), at: offset)
    }

    /// Sets the synced-through watermark of the version-6 frame at `offset` (header bytes 32..<40) and reseals it.
    func setWatermark(_ value: UInt64, at offset: Int) throws {
        var b = try bytes()
        for i in 0..<8 { b[offset + 32 + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))) }
        try write(b)
        try resealFrame(at: offset)
    }

    /// Overwrites `count` bytes at `offset` with zeros.
    func zero(at offset: Int, count: Int) throws {
        var b = try bytes()
        for i in offset..<(offset + count) { b[i] = 0 }
        try write(b)
    }
}

/// CRC-32 (IEEE, the one zlib's `crc32()` computes), written out so the tests need nothing but Foundation.
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}

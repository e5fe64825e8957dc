import Foundation
import TrellisCore

/// Reads what `ByteWriter` wrote, checking every length against the bytes that are left, so that damaged input
/// throws `TrellisError.corrupt` (naming the input and the byte position) instead of trapping or allocating without
/// bound. Every record, checkpoint and schema decoder reads through it.
///
/// It holds its array, so a reader may be kept and handed on (a checkpoint's section readers share the chunk's
/// bytes). The common cases (one-byte varints, items whose bytes are all present) skip the general loops.
struct ByteReader {
    let bytes: [UInt8]
    private(set) var position: Int
    let end: Int
    /// Names the input in error messages ("segment-…1.trj record 17").
    let context: String

    init(_ bytes: [UInt8], from start: Int = 0, to end: Int? = nil, context: String) {
        self.bytes = bytes
        self.position = start
        self.end = end ?? bytes.count
        self.context = context
        precondition(self.end <= bytes.count, "a reader past the end of its bytes")
    }

    var remaining: Int { end - position }
    var isAtEnd: Bool { position >= end }

    func failure(_ what: String) -> TrellisError {
        TrellisError(.corrupt, "\(context): \(what) at byte \(position)")
    }

    /// Runs `body` on the address of byte `offset`; the caller has checked that the bytes it reads are there.
    @inline(__always) private func unchecked<R>(at offset: Int, _ body: (UnsafePointer<UInt8>) -> R) -> R {
        bytes.withUnsafeBufferPointer { body($0.baseAddress! + offset) }
    }

    @inline(__always) mutating func u8() throws(TrellisError) -> UInt8 {
        guard position < end else { throw failure("unexpected end") }
        let b = unchecked(at: position) { $0.pointee }
        position &+= 1
        return b
    }

    mutating func u16() throws(TrellisError) -> UInt16 {
        UInt16(try u8()) | UInt16(try u8()) << 8
    }

    mutating func u32() throws(TrellisError) -> UInt32 {
        guard remaining >= 4 else { throw failure("unexpected end") }
        let v = unchecked(at: position) { UnsafeRawPointer($0).loadUnaligned(as: UInt32.self) }
        position &+= 4
        return UInt32(littleEndian: v)
    }

    /// The next four bytes as `u32()` reads them, without moving past them.
    func peekU32() throws(TrellisError) -> UInt32 {
        var copy = self
        return try copy.u32()
    }

    @inline(__always) mutating func u64() throws(TrellisError) -> UInt64 {
        guard remaining >= 8 else { throw failure("unexpected end") }
        let v = unchecked(at: position) { UnsafeRawPointer($0).loadUnaligned(as: UInt64.self) }
        position &+= 8
        return UInt64(littleEndian: v)
    }

    @inline(__always) mutating func varint() throws(TrellisError) -> UInt64 {
        if position < end {
            let b = unchecked(at: position) { $0.pointee }
            if b < 0x80 {
                position &+= 1
                return UInt64(b)
            }
        }
        return try longVarint()
    }

    /// A varint of more than one byte: without bounds checks when ten bytes are left, else (and for anything
    /// malformed) byte by byte, for the error at the byte where it is.
    @inline(never) private mutating func longVarint() throws(TrellisError) -> UInt64 {
        if end - position >= 10 {
            let (v, length) = unchecked(at: position) { start -> (UInt64, Int) in
                var p = start
                var v: UInt64 = 0
                var shift: UInt64 = 0
                while shift < 63 {
                    let b = p.pointee
                    p += 1
                    v |= UInt64(b & 0x7f) << shift
                    if b < 0x80 { return (v, p - start) }
                    shift += 7
                }
                guard p.pointee <= 1 else { return (0, 0) }
                return (v | UInt64(p.pointee) << 63, p - start + 1)
            }
            if length > 0 {
                position &+= length
                return v
            }
        }
        return try checkedVarint()
    }

    private mutating func checkedVarint() throws(TrellisError) -> UInt64 {
        var v: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try u8()
            guard shift < 64, shift != 63 || b <= 1 else { throw failure("varint too long") }
            v |= UInt64(b & 0x7f) << shift
            if b < 0x80 { return v }
            shift += 7
        }
    }

    /// A zigzag varint.
    @inline(__always) mutating func signed() throws(TrellisError) -> Int64 {
        let z = try varint()
        return Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))
    }

    /// A count of items that each take at least `minimumBytes`: more than the input can hold is damage.
    @inline(__always) mutating func count(minimumBytes: Int = 1) throws(TrellisError) -> Int {
        let n = try varint()
        guard n <= UInt64(remaining / max(minimumBytes, 1)) else { throw failure("count \(n) exceeds the input") }
        return Int(n)
    }

    /// A value that must fit in `Int` and be at most `limit`.
    @inline(__always) mutating func int(limit: Int = .max) throws(TrellisError) -> Int {
        let n = try varint()
        guard limit >= 0, n <= UInt64(limit) else { throw failure("number \(n) is out of range") }
        return Int(n)
    }

    /// The next `n` bytes, checked to be there; the offset they start at.
    @inline(__always) private mutating func advance(_ n: Int) throws(TrellisError) -> Int {
        guard n >= 0, n <= remaining else { throw failure("length \(n) exceeds the input") }
        defer { position &+= n }
        return position
    }

    /// The next `n` bytes, in place (the slice shares the reader's array).
    mutating func take(_ n: Int) throws(TrellisError) -> ArraySlice<UInt8> {
        let start = try advance(n)
        return bytes[start..<start + n]
    }

    /// A varint length, then that many bytes, in place.
    mutating func blob() throws(TrellisError) -> ArraySlice<UInt8> {
        try take(try count())
    }

    /// A varint length, then that much UTF-8, validated. `String(decoding:as:)` copies valid UTF-8 exactly and
    /// replaces anything invalid, so text that is not ASCII is valid exactly when the string holds the same bytes.
    /// (`String(validating:as:)` does the same check but, unspecialised, looks up generic metadata for every string.)
    mutating func string() throws(TrellisError) -> String {
        let n = try count()
        let start = try advance(n)
        guard n > 0 else { return "" }
        let valid: String? = unchecked(at: start) { p in
            let b = UnsafeBufferPointer(start: p, count: n)
            var s = String(decoding: b, as: UTF8.self)
            if Self.isASCII(b) { return s }
            let same = s.withUTF8 { $0.count == n && memcmp($0.baseAddress!, p, n) == 0 }
            return same ? s : nil
        }
        guard let valid else { throw failure("invalid UTF-8") }
        return valid
    }

    /// `string()` handed to `body` as its UTF-8 bytes in place, validated the same way (the same failure for
    /// invalid UTF-8), without making a `String` of them.
    mutating func withString<R>(_ body: (UnsafeRawBufferPointer) -> R) throws(TrellisError) -> R {
        let n = try count()
        let start = try advance(n)
        let valid: Bool = unchecked(at: start) { p in
            let b = UnsafeBufferPointer(start: p, count: n)
            if Self.isASCII(b) { return true }
            var s = String(decoding: b, as: UTF8.self)
            return s.withUTF8 { $0.count == n && memcmp($0.baseAddress!, p, n) == 0 }
        }
        guard valid else { throw failure("invalid UTF-8") }
        return unchecked(at: start) { body(UnsafeRawBufferPointer(start: $0, count: n)) }
    }

    @inline(__always) private static func isASCII(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let start = b.baseAddress else { return true }
        let raw = UnsafeRawPointer(start)
        var i = 0
        var bits: UInt64 = 0
        while i + 8 <= b.count {
            bits |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < b.count {
            bits |= UInt64(start[i])
            i += 1
        }
        return bits & 0x8080_8080_8080_8080 == 0
    }

    /// `Data` of a varint length and that many bytes.
    mutating func data() throws(TrellisError) -> Data {
        let n = try count()
        let start = try advance(n)
        return unchecked(at: start) { Data(bytes: $0, count: n) }
    }

    /// A 16-byte UUID.
    mutating func uuid() throws(TrellisError) -> UUID {
        let start = try advance(16)
        var u: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        unchecked(at: start) { p in
            withUnsafeMutableBytes(of: &u) { $0.copyMemory(from: UnsafeRawBufferPointer(start: p, count: 16)) }
        }
        return UUID(uuid: u)
    }

    /// Moves on to the next multiple of `alignment` (past padding).
    mutating func skip(to alignment: Int) throws(TrellisError) {
        _ = try advance((alignment - position % alignment) % alignment)
    }
}

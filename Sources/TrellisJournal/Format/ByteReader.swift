import TrellisCore
import TrellisGraph

/// Reads what `ByteWriter` wrote, checking every length against the bytes that are left, so that damaged input
/// throws `TrellisError.corrupt` instead of trapping or allocating without bound.
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
    }

    var remaining: Int { end - position }
    var isAtEnd: Bool { position >= end }

    func failure(_ what: String) -> TrellisError {
        TrellisError(.corrupt, "\(context): \(what) at byte \(position)")
    }

    mutating func u8() throws -> UInt8 {
        guard position < end else { throw failure("unexpected end") }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func u16() throws -> UInt16 {
        UInt16(try u8()) | UInt16(try u8()) << 8
    }

    mutating func u32() throws -> UInt32 {
        guard remaining >= 4 else { throw failure("unexpected end") }
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(bytes[position + i]) << UInt32(8 * i) }
        position += 4
        return v
    }

    mutating func u64() throws -> UInt64 {
        guard remaining >= 8 else { throw failure("unexpected end") }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[position + i]) << UInt64(8 * i) }
        position += 8
        return v
    }

    mutating func varint() throws -> UInt64 {
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

    mutating func signed() throws -> Int64 {
        let z = try varint()
        return Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))
    }

    /// A count of items that each take at least `minimumBytes`: more than the input can hold is damage.
    mutating func count(minimumBytes: Int = 1) throws -> Int {
        let n = try varint()
        guard n <= UInt64(remaining / max(minimumBytes, 1)) else { throw failure("count \(n) exceeds the input") }
        return Int(n)
    }

    /// A value that must fit in `Int` and be at most `limit`.
    mutating func int(limit: Int = .max) throws -> Int {
        let n = try varint()
        guard limit >= 0, n <= UInt64(limit) else { throw failure("number \(n) is out of range") }
        return Int(n)
    }

    mutating func take(_ n: Int) throws -> ArraySlice<UInt8> {
        guard n >= 0, n <= remaining else { throw failure("length \(n) exceeds the input") }
        defer { position += n }
        return bytes[position..<position + n]
    }

    mutating func blob() throws -> ArraySlice<UInt8> {
        try take(try count())
    }

    mutating func string() throws -> String {
        let b = try blob()
        guard let s = String(validating: b, as: UTF8.self) else { throw failure("invalid UTF-8") }
        return s
    }

    mutating func skip(to alignment: Int) throws {
        let extra = (alignment - position % alignment) % alignment
        _ = try take(extra)
    }
}

import Foundation
import TrellisCore
import TrellisGraph

/// The fast path of `ByteReader` for change-set payloads: reads straight from a buffer the caller keeps alive.
///
/// Every method checks what its `ByteReader` counterpart checks, in the same order, and fails with the same message
/// at the same byte position, so damaged input throws the same `TrellisError.corrupt`. Only the common cases (one-byte
/// varints, values whose bytes are all present) skip the general loops.
struct PayloadReader {
    private let base: UnsafePointer<UInt8>
    private(set) var position: Int
    let end: Int
    let context: String

    /// `bytes` must outlive the reader.
    init(_ bytes: UnsafeBufferPointer<UInt8>, context: String) {
        // A dangling but never dereferenced base for an empty buffer: every read checks `end` first.
        self.base = bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!
        self.position = 0
        self.end = bytes.count
        self.context = context
    }

    var remaining: Int { end - position }
    var isAtEnd: Bool { position >= end }

    func failure(_ what: String) -> TrellisError {
        TrellisError(.corrupt, "\(context): \(what) at byte \(position)")
    }

    @inline(__always) mutating func u8() throws(TrellisError) -> UInt8 {
        guard position < end else { throw failure("unexpected end") }
        let b = base[position]
        position &+= 1
        return b
    }

    @inline(__always) mutating func u64() throws(TrellisError) -> UInt64 {
        guard remaining >= 8 else { throw failure("unexpected end") }
        let v = UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self)
        position &+= 8
        return UInt64(littleEndian: v)
    }

    @inline(__always) mutating func varint() throws(TrellisError) -> UInt64 {
        if position < end {
            let b = base[position]
            if b < 0x80 {
                position &+= 1
                return UInt64(b)
            }
        }
        return try longVarint()
    }

    /// A varint of more than one byte: without bounds checks when ten bytes are left, else (and for anything
    /// malformed) byte by byte as `ByteReader` reads it, for the same error at the same position.
    @inline(never) private mutating func longVarint() throws(TrellisError) -> UInt64 {
        if end - position >= 10 {
            var p = base + position
            var v: UInt64 = 0
            var shift: UInt64 = 0
            while shift < 63 {
                let b = p.pointee
                p += 1
                v |= UInt64(b & 0x7f) << shift
                if b < 0x80 {
                    position = p - base
                    return v
                }
                shift += 7
            }
            if p.pointee <= 1 {
                v |= UInt64(p.pointee) << 63
                position = p - base + 1
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

    @inline(__always) mutating func take(_ n: Int) throws(TrellisError) -> UnsafeBufferPointer<UInt8> {
        guard n >= 0, n <= remaining else { throw failure("length \(n) exceeds the input") }
        defer { position &+= n }
        return UnsafeBufferPointer(start: base + position, count: n)
    }

    @inline(__always) mutating func blob() throws(TrellisError) -> UnsafeBufferPointer<UInt8> {
        try take(try count())
    }

    /// UTF-8 text, validated. `String(decoding:as:)` copies valid UTF-8 exactly and replaces anything invalid, so text
    /// that is not ASCII is valid exactly when the string holds the same bytes. (`String(validating:as:)` does the
    /// same check but, unspecialised, looks up generic metadata for every string.)
    mutating func string() throws(TrellisError) -> String {
        let b = try blob()
        let s = String(decoding: b, as: UTF8.self)
        if !Self.isASCII(b) {
            var copy = s
            let same = copy.withUTF8 { $0.count == b.count && memcmp($0.baseAddress!, b.baseAddress!, b.count) == 0 }
            guard same else { throw failure("invalid UTF-8") }
        }
        return s
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

    /// A `Value` as `ByteReader.value()` reads it.
    mutating func value() throws(TrellisError) -> Value {
        let raw = try u8()
        switch raw {
        case ValueTag.null.rawValue: return .null
        case ValueTag.boolFalse.rawValue: return .bool(false)
        case ValueTag.boolTrue.rawValue: return .bool(true)
        case ValueTag.int.rawValue: return .int(try signed())
        case ValueTag.double.rawValue: return .double(Double(bitPattern: try u64()))
        case ValueTag.string.rawValue: return .string(try string())
        case ValueTag.date.rawValue:
            return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try u64())))
        case ValueTag.data.rawValue: return .data(Data(buffer: try blob()))
        case ValueTag.uuid.rawValue:
            let b = try take(16)
            var u: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &u) { $0.copyMemory(from: UnsafeRawBufferPointer(b)) }
            return .uuid(UUID(uuid: u))
        case ValueTag.url.rawValue:
            let text = try string()
            guard let url = URL(string: text) else { throw failure("unreadable URL") }
            return .url(url)
        case ValueTag.decimal.rawValue:
            let text = try string()
            guard let d = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw failure("unreadable decimal")
            }
            return .decimal(d)
        case ValueTag.decimalNaN.rawValue: return .decimal(.nan)
        default: throw failure("unknown value tag \(raw)")
        }
    }
}

import Foundation
import TrellisCore

/// The tag byte that starts every encoded `Value`. Part of the journal format: never renumber.
///
/// `ByteWriter.value(_:)` and `ByteReader.value()` below are the one value codec: change sets, checkpoints (values of
/// other kinds), schemas (defaults) and migration records all write and read values through them.
enum ValueTag: UInt8 {
    case null = 0
    case boolFalse = 1
    case boolTrue = 2
    /// Zigzag varint.
    case int = 3
    /// IEEE 754 bit pattern, 8 bytes little-endian (every double, NaN payloads and -0.0 included, round-trips).
    case double = 4
    /// Varint length + UTF-8.
    case string = 5
    /// Seconds since 2001-01-01 as an IEEE 754 bit pattern, as `Date` holds it.
    case date = 6
    /// Varint length + bytes.
    case data = 7
    /// 16 bytes.
    case uuid = 8
    /// Varint length + the absolute string in UTF-8.
    case url = 9
    /// Varint length + the decimal in plain text ("-12.5"), which `Decimal(string:)` reads back exactly.
    case decimal = 10
    case decimalNaN = 11
    /// Format version 8: varint count, then each element as a tagged value, all ints (tag 3) or all strings (tag 5);
    /// version 9 lets a metadata list (attribute type 19) mix null, Booleans, ints, doubles and strings (tags 0–5).
    case list = 12
}

extension ByteWriter {
    /// A tag byte, then the value's bytes as its tag says.
    mutating func value(_ value: Value) {
        switch value {
        case .null: u8(ValueTag.null.rawValue)
        case .bool(let b): u8(b ? ValueTag.boolTrue.rawValue : ValueTag.boolFalse.rawValue)
        case .int(let i): u8(ValueTag.int.rawValue, signed: i)
        case .double(let d): u8(ValueTag.double.rawValue, u64: d.bitPattern)
        case .string(let s):
            u8(ValueTag.string.rawValue)
            string(s)
        case .date(let d): u8(ValueTag.date.rawValue, u64: d.timeIntervalSinceReferenceDate.bitPattern)
        case .data(let d):
            u8(ValueTag.data.rawValue)
            d.withUnsafeBytes { blob($0) }
        case .uuid(let u):
            u8(ValueTag.uuid.rawValue)
            withUnsafeBytes(of: u.uuid) { append($0) }
        case .url(let u):
            u8(ValueTag.url.rawValue)
            string(u.absoluteString)
        case .decimal(let d):
            if d.isNaN {
                u8(ValueTag.decimalNaN.rawValue)
            } else {
                u8(ValueTag.decimal.rawValue)
                string(d.description)
            }
        case .list(let elements):
            u8(ValueTag.list.rawValue)
            varint(elements.count)
            for e in elements { self.value(e) }
        }
    }
}

extension ByteReader {
    /// A value as `ByteWriter.value(_:)` writes it.
    mutating func value() throws(TrellisError) -> Value {
        try value(tag: try u8())
    }

    /// The rest of a value whose tag byte `raw` has been read.
    mutating func value(tag raw: UInt8) throws(TrellisError) -> Value {
        switch raw {
        case ValueTag.null.rawValue: return .null
        case ValueTag.boolFalse.rawValue: return .bool(false)
        case ValueTag.boolTrue.rawValue: return .bool(true)
        case ValueTag.int.rawValue: return .int(try signed())
        case ValueTag.double.rawValue: return .double(Double(bitPattern: try u64()))
        case ValueTag.string.rawValue: return .string(try string())
        case ValueTag.date.rawValue:
            return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try u64())))
        case ValueTag.data.rawValue: return .data(try data())
        case ValueTag.uuid.rawValue: return .uuid(try uuid())
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
        case ValueTag.list.rawValue:
            // Each element takes at least its tag byte, so the count is bounded by the input.
            let n = try count(minimumBytes: 1)
            var elements: [Value] = []
            elements.reserveCapacity(n)
            // Elements are scalars: null, Booleans, ints, doubles or strings (a metadata list mixes them; a list's
            // attribute type says which it may hold, and the readers of records and checkpoints check that).
            for _ in 0..<n {
                let tag = try u8()
                switch tag {
                case ValueTag.null.rawValue: elements.append(.null)
                case ValueTag.boolFalse.rawValue: elements.append(.bool(false))
                case ValueTag.boolTrue.rawValue: elements.append(.bool(true))
                case ValueTag.int.rawValue: elements.append(.int(try signed()))
                case ValueTag.double.rawValue: elements.append(.double(Double(bitPattern: try u64())))
                case ValueTag.string.rawValue: elements.append(.string(try string()))
                default: throw failure("value tag \(tag) in a list (only null, Booleans, numbers and strings)")
                }
            }
            return .list(elements)
        default: throw failure("unknown value tag \(raw)")
        }
    }
}

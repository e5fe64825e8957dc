import Foundation
import TrellisCore
import TrellisGraph

/// The tag byte that starts every encoded `Value`. Part of the journal format: never renumber.
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
}

extension ByteWriter {
    mutating func value(_ value: Value) {
        switch value {
        case .null: u8(ValueTag.null.rawValue)
        case .bool(let b): u8(b ? ValueTag.boolTrue.rawValue : ValueTag.boolFalse.rawValue)
        case .int(let i):
            u8(ValueTag.int.rawValue)
            signed(i)
        case .double(let d):
            u8(ValueTag.double.rawValue)
            u64(d.bitPattern)
        case .string(let s):
            u8(ValueTag.string.rawValue)
            string(s)
        case .date(let d):
            u8(ValueTag.date.rawValue)
            u64(d.timeIntervalSinceReferenceDate.bitPattern)
        case .data(let d):
            u8(ValueTag.data.rawValue)
            blob(d)
        case .uuid(let u):
            u8(ValueTag.uuid.rawValue)
            let b = u.uuid
            append([b.0, b.1, b.2, b.3, b.4, b.5, b.6, b.7, b.8, b.9, b.10, b.11, b.12, b.13, b.14, b.15])
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
        }
    }
}

extension ByteReader {
    mutating func value() throws -> Value {
        let raw = try u8()
        guard let tag = ValueTag(rawValue: raw) else { throw failure("unknown value tag \(raw)") }
        switch tag {
        case .null: return .null
        case .boolFalse: return .bool(false)
        case .boolTrue: return .bool(true)
        case .int: return .int(try signed())
        case .double: return .double(Double(bitPattern: try u64()))
        case .string: return .string(try string())
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try u64())))
        case .data: return .data(Data(try blob()))
        case .uuid:
            let b = Array(try take(16))
            return .uuid(
                UUID(
                    uuid: (
                        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                        b[15]
                    )))
        case .url:
            let text = try string()
            guard let url = URL(string: text) else { throw failure("unreadable URL") }
            return .url(url)
        case .decimal:
            let text = try string()
            guard let d = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw failure("unreadable decimal")
            }
            return .decimal(d)
        case .decimalNaN: return .decimal(.nan)
        }
    }
}

import Foundation
import Trellis

/// How the tool writes values, times and object IDs, in tables and in JSON. One place, so `dump`, `history` and
/// `export` agree and the README can describe the encoding once.
enum ValueFormat {
    /// A value for a table cell: strings quoted and cut at `limit` characters, bytes as their count and first bytes
    /// in hex (`hexPrefix(_:)`).
    static func text(_ value: Value, limit: Int = 48) -> String {
        switch value {
        case .string(let s) where s.count > limit: return "\"\(s.prefix(limit - 1))…\""
        case .date(let d): return timestamp(d)
        case .data(let d): return hexPrefix(d)
        default: return value.description
        }
    }

    /// `<5 bytes: 48656c6c6f>`; past `shown` bytes the hex is cut with `…` (`<12 bytes: 48656c6c6f20776f…>`), so a
    /// cell stays short and still tells two blobs apart by their start. `<0 bytes>` when empty.
    static func hexPrefix(_ data: Data, shown: Int = 8) -> String {
        let count = "\(data.count) byte\(data.count == 1 ? "" : "s")"
        guard !data.isEmpty else { return "<\(count)>" }
        let digits = Array("0123456789abcdef")
        var hex = ""
        for byte in data.prefix(shown) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0f)])
        }
        return "<\(count): \(hex)\(data.count > shown ? "…" : "")>"
    }

    /// A value in JSON: numbers and booleans as themselves; dates as ISO 8601 UTC text with microseconds; data as
    /// base64; UUIDs, URLs and decimals as text (a decimal keeps every digit that way).
    static func json(_ value: Value) -> JSON {
        switch value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let n): return .int(n)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .date(let d): return .string(timestamp(d))
        case .data(let d): return .string(d.base64EncodedString())
        case .uuid(let u): return .string(u.uuidString)
        case .url(let u): return .string(u.absoluteString)
        case .decimal(let d): return .string(d.description)
        case .list(let elements): return .array(elements.map(json))
        }
    }

    /// `2026-11-29T11:30:01.123456Z`: record times are kept to the microsecond, so the text keeps them too. A date
    /// no calendar text can hold (NaN, infinite, before year 1 or after 9999: a store may hold any double) is
    /// printed as its seconds since 1970 instead (`nan s`, `inf s`, `1e+300 s`), never trapped on.
    static func timestamp(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        // Years 1 to 9999: -62,135,596,800 s to 253,402,300,799 s since 1970.
        guard seconds.isFinite, seconds >= -62_135_596_800, seconds < 253_402_300_800 else {
            return "\(seconds) s"
        }
        return timestamp(microseconds: Int64((seconds * 1_000_000).rounded()))
    }

    /// A record's time, microseconds since 1970 as its frame holds them (any `Int64`).
    static func timestamp(microseconds micros: Int64) -> String {
        // Years 1 to 9999 as above; anything else (the ends of Int64 among it) is printed as the number it is.
        guard micros >= -62_135_596_800_000_000, micros < 253_402_300_800_000_000 else { return "\(micros) µs" }
        let seconds = micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000
        let fraction = micros - seconds * 1_000_000
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(fraction))
    }

    /// A byte count for people: `812 B`, `4.2 KiB`, `17.0 MiB`.
    static func bytes(_ n: Int) -> String {
        if n < 1024 { return "\(n) B" }
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var value = Double(n) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return String(format: "%.1f ", value) + units[unit]
    }
}

/// Object IDs as the tool prints and reads them: `Item#42` (entity name, serial). `1#42` (entity number) is read
/// too, for stores whose entity names a shell would mangle.
enum ObjectName {
    static func text(_ id: ObjectID, _ schema: Schema) -> String { schema.describe(id) }

    /// `Folder, Note`: the entities of `schema` for a message, without the placeholders removed ones leave.
    static func entityNames(_ schema: Schema) -> String {
        schema.entities.filter { !$0.isRetired }.map(\.name).joined(separator: ", ")
    }

    static func parse(_ text: String, _ schema: Schema) throws -> ObjectID {
        guard let hash = text.lastIndex(of: "#"), let serial = UInt64(text[text.index(after: hash)...]), serial > 0
        else {
            throw UsageError("'\(text)' is not an object ID; write it as Entity#serial, e.g. Item#42")
        }
        let entity = String(text[..<hash])
        if let number = UInt32(entity), Int(number) < schema.entities.count {
            return ObjectID(entity: number, serial: serial)
        }
        guard let number = try? schema.entityNumber(entity) else {
            throw UsageError("the store has no entity '\(entity)' (it has: \(entityNames(schema)))")
        }
        return ObjectID(entity: number, serial: serial)
    }
}

import Foundation

/// A JSON value with its object keys in the order they were built, so `--json` output reads in the same order as
/// the README documents it, and stays byte-for-byte stable from run to run.
///
/// ```swift
/// let doc: JSON = .object([("sequence", .int(12)), ("clean", .bool(true))])
/// print(doc.rendered())   // {"sequence":12,"clean":true} (pretty-printed by default)
/// ```
indirect enum JSON {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    static func int(_ n: Int) -> JSON { .int(Int64(n)) }
    static func int(_ n: UInt64) -> JSON { .int(Int64(clamping: n)) }

    /// The JSON text; `pretty` indents nested containers by two spaces per level.
    func rendered(pretty: Bool = true) -> String {
        var out = ""
        write(to: &out, pretty: pretty, depth: 0)
        return out
    }

    private func write(to out: inout String, pretty: Bool, depth: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let n): out += String(n)
        case .double(let d):
            // JSON has no NaN or infinity; null keeps the document parseable and the value visibly absent.
            out += d.isFinite ? String(d) : "null"
        case .string(let s): Self.quote(s, into: &out)
        case .array(let items):
            writeContainer(items.map { (nil, $0) }, open: "[", close: "]", to: &out, pretty: pretty, depth: depth)
        case .object(let pairs):
            writeContainer(pairs.map { ($0.0, $0.1) }, open: "{", close: "}", to: &out, pretty: pretty, depth: depth)
        }
    }

    private func writeContainer(
        _ items: [(String?, JSON)], open: String, close: String, to out: inout String, pretty: Bool, depth: Int
    ) {
        out += open
        guard !items.isEmpty else {
            out += close
            return
        }
        let inner = pretty ? "\n" + String(repeating: "  ", count: depth + 1) : ""
        for (i, (key, value)) in items.enumerated() {
            if i > 0 { out += "," }
            out += inner
            if let key {
                Self.quote(key, into: &out)
                out += pretty ? ": " : ":"
            }
            value.write(to: &out, pretty: pretty, depth: depth + 1)
        }
        out += pretty ? "\n" + String(repeating: "  ", count: depth) : ""
        out += close
    }

    static func quote(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20:
                out +=
                    "\\u" + String(repeating: "0", count: 4 - String(c.value, radix: 16).count)
                    + String(c.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

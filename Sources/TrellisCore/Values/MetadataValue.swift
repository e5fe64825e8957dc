import Foundation

/// One value of open metadata (`[String: MetadataValue]`): a JSON scalar. Null, a Boolean, an integer, a double or a
/// string, so that a key's value can be compared, indexed and queried like any attribute value.
///
/// Nested arrays and objects are not values: metadata is one level of keys, each with a scalar (a nested shape
/// belongs in a composite, a relationship, or keys such as `"size.width"`). A key whose value is `.null` is present;
/// a missing key reads as nil: `$0.info["k"] == .null` and `$0.info["k"] == nil` are different questions.
///
/// Numbers compare by value across `.int` and `.double` (`.int(3) == .double(3)`). Ordering holds only within a kind,
/// as in MongoDB and Realm's mixed values: numbers by value (NaN after every other number), strings as `String`
/// orders them, `false` before `true`; a string is neither less nor greater than a number, and `.null` is ordered
/// against nothing. So `$0.info["rating", default: .null] > 3` matches numbers above 3 and never a string.
///
/// ```swift
/// let info: [String: MetadataValue] = ["color": "red", "rating": 4, "weight": 1.5, "sale": true, "note": .null]
/// ```
public enum MetadataValue: Sendable, Hashable, Codable {
    /// JSON null: the key is present with no value.
    case null
    /// A Boolean.
    case bool(Bool)
    /// An integer.
    case int(Int64)
    /// A double.
    case double(Double)
    /// A string.
    case string(String)

    /// The value as the store holds it inside the attribute's list: the `Value` of the same case.
    public var value: Value {
        switch self {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        }
    }

    /// The metadata value of a stored `Value`; nil for a case metadata does not hold (a date, a list…).
    public init?(_ value: Value) {
        switch value {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .int(i)
        case .double(let d): self = .double(d)
        case .string(let s): self = .string(s)
        default: return nil
        }
    }

    /// Whether this is `.null`.
    public var isNull: Bool { self == .null }

    /// Equal as their stored values are: numbers by value across cases, NaN equal to NaN.
    public static func == (lhs: MetadataValue, rhs: MetadataValue) -> Bool {
        lhs.value == rhs.value
    }

    /// Hashes consistently with `==` (as `Value` does).
    public func hash(into hasher: inout Hasher) { value.hash(into: &hasher) }

    /// Encodes as the JSON scalar: null, true/false, a number or a string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .int(let i): try container.encode(i)
        case .double(let d): try container.encode(d)
        case .string(let s): try container.encode(s)
        }
    }

    /// Decodes a JSON scalar: a whole number that fits `Int64` as `.int`, any other number as `.double`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let b = try? container.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? container.decode(Int64.self) {
            self = .int(i)
        } else if let d = try? container.decode(Double.self) {
            self = .double(d)
        } else if let s = try? container.decode(String.self) {
            self = .string(s)
        } else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "metadata values are null, Booleans, numbers or strings")
        }
    }
}

extension MetadataValue: Comparable {
    /// The three-way order of two values of one kind (not null); nil when they are unordered.
    private static func order(_ lhs: MetadataValue, _ rhs: MetadataValue) -> Int? {
        let (a, b) = (lhs.value, rhs.value)
        guard !a.isNull, a.typeRank == b.typeRank else { return nil }
        return Value.compare(a, b)
    }

    /// Ordered within a kind only (numbers by value, strings, Booleans); values of different kinds, and nulls, are
    /// unordered: neither is less.
    public static func < (lhs: MetadataValue, rhs: MetadataValue) -> Bool { order(lhs, rhs).map { $0 < 0 } ?? false }
    /// Less or equal within a kind; false for unordered values (as for `Double.nan`).
    public static func <= (lhs: MetadataValue, rhs: MetadataValue) -> Bool {
        order(lhs, rhs).map { $0 <= 0 } ?? false
    }
    /// Greater within a kind; false for unordered values.
    public static func > (lhs: MetadataValue, rhs: MetadataValue) -> Bool { order(lhs, rhs).map { $0 > 0 } ?? false }
    /// Greater or equal within a kind; false for unordered values.
    public static func >= (lhs: MetadataValue, rhs: MetadataValue) -> Bool {
        order(lhs, rhs).map { $0 >= 0 } ?? false
    }
}

extension MetadataValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral
{
    /// A `.string`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An `.int`.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A `.double`.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A `.bool`. (No nil literal: `nil` is a missing key, `.null` a key holding null.)
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension MetadataValue: CustomStringConvertible {
    /// The value as JSON writes it: `null`, `true`, `4`, `1.5`, `"red"`.
    public var description: String {
        switch self {
        case .null: return "null"
        default: return value.description
        }
    }
}

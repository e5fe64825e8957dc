import Foundation

/// One attribute value, as the dynamic API, change sets and the journal see it.
///
/// Integer attributes of every width are carried as `.int`, `Float` as `.double`; the attribute's declared type says
/// how the value is checked and converted. `Value` is totally ordered (null first, then by type, then by value) so that
/// it can key ordered indexes; `Double.nan` sorts after every other double.
///
/// ```swift
/// let values: [String: Value] = ["title": "Buy milk", "score": 4.5, "done": false]
/// ```
public enum Value: Sendable {
    /// No value: an optional attribute that is not set.
    case null
    /// A Boolean.
    case bool(Bool)
    /// An integer of any width (`Int`, `Int8` … `Int64` attributes).
    case int(Int64)
    /// A `Double`, or a `Float` widened to it.
    case double(Double)
    /// A string.
    case string(String)
    /// A point in time.
    case date(Date)
    /// Bytes.
    case data(Data)
    /// A UUID.
    case uuid(UUID)
    /// A URL.
    case url(URL)
    /// A decimal number.
    case decimal(Decimal)
    /// The elements of a collection attribute (`[String]`, `[Int]`, `Set<String>`), scalars of one case; a set's
    /// elements are held sorted and distinct. Ordered element by element, a prefix first.
    case list([Value])

    /// Whether this is `.null`.
    @inlinable public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The Boolean of a `.bool`; nil for any other case.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The integer of an `.int`; nil for any other case.
    public var intValue: Int64? {
        if case .int(let i) = self { return i }
        return nil
    }

    /// The number of a `.double`, or of an `.int` converted; nil for any other case.
    public var doubleValue: Double? {
        switch self {
        case .double(let d): return d
        case .int(let i): return Double(i)
        default: return nil
        }
    }

    /// The string of a `.string`; nil for any other case.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The date of a `.date`; nil for any other case.
    public var dateValue: Date? {
        if case .date(let d) = self { return d }
        return nil
    }

    /// The rank of the case in the total order across types.
    package var typeRank: UInt8 {
        switch self {
        case .null: return 0
        case .bool: return 1
        case .int, .double, .decimal: return 2
        case .string: return 3
        case .date: return 4
        case .data: return 5
        case .uuid: return 6
        case .url: return 7
        case .list: return 8
        }
    }

    /// The elements of a `.list`; nil for any other case.
    public var listValue: [Value]? {
        if case .list(let elements) = self { return elements }
        return nil
    }
}

extension Value: Comparable, Hashable {
    /// The total order indexes sort by: null first, then by type, then by value (numbers of any case by numeric value:
    /// integers and doubles exactly, decimals through `Double`).
    public static func < (lhs: Value, rhs: Value) -> Bool {
        compare(lhs, rhs) < 0
    }

    /// Equality follows the order: `.int(1) == .double(1)`, and NaN equals NaN, so indexes and hashing agree.
    public static func == (lhs: Value, rhs: Value) -> Bool {
        compare(lhs, rhs) == 0
    }

    /// Hashes consistently with `==`: equal numbers of different cases hash alike.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0 as UInt8)
        case .bool(let b): hasher.combine(b)
        case .int(let i): hasher.combine(Double(i))
        case .double(let d):
            // Every NaN is one value here; Double's own hashing already makes -0.0 and 0.0 agree.
            if d.isNaN { hasher.combine(UInt64.max) } else { hasher.combine(d) }
        case .decimal(let d): hasher.combine(NSDecimalNumber(decimal: d).doubleValue)
        case .string(let s): hasher.combine(s)
        case .date(let d):
            let t = d.timeIntervalSinceReferenceDate
            if t.isNaN { hasher.combine(UInt64.max - 1) } else { hasher.combine(t) }
        case .data(let d): hasher.combine(d)
        case .uuid(let u): hasher.combine(u)
        case .url(let u): hasher.combine(u.absoluteString)
        case .list(let elements):
            hasher.combine(elements.count)
            for e in elements { e.hash(into: &hasher) }
        }
    }

    /// Three-way comparison; numbers of different cases compare by numeric value: an integer and a double exactly, a
    /// decimal through `Double` (so beyond about 15 significant digits a decimal can equal neighbouring integers).
    package static func compare(_ lhs: Value, _ rhs: Value) -> Int {
        switch (lhs, rhs) {
        case (.int(let a), .int(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.double(let a), .double(let b)): return compareDoubles(a, b)
        case (.string(let a), .string(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.bool(let a), .bool(let b)): return a == b ? 0 : (a ? 1 : -1)
        case (.date(let a), .date(let b)):
            return compareDoubles(a.timeIntervalSinceReferenceDate, b.timeIntervalSinceReferenceDate)
        case (.null, .null): return 0
        default: break
        }
        let (ra, rb) = (lhs.typeRank, rhs.typeRank)
        if ra != rb { return ra < rb ? -1 : 1 }
        switch (lhs, rhs) {
        case (.decimal(let a), .decimal(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.decimal(let a), _): return compareDoubles(NSDecimalNumber(decimal: a).doubleValue, rhs.doubleValue!)
        case (_, .decimal(let b)): return compareDoubles(lhs.doubleValue!, NSDecimalNumber(decimal: b).doubleValue)
        case (.int(let a), .double(let b)): return compareExactly(a, b)
        case (.double(let a), .int(let b)): return -compareExactly(b, a)
        case (.data(let a), .data(let b)): return compareBytes(a, b)
        case (.uuid(let a), .uuid(let b)): return a.uuidString < b.uuidString ? -1 : (a == b ? 0 : 1)
        case (.url(let a), .url(let b)):
            return a.absoluteString < b.absoluteString ? -1 : (a.absoluteString == b.absoluteString ? 0 : 1)
        case (.list(let a), .list(let b)):
            for i in 0..<min(a.count, b.count) {
                let c = compare(a[i], b[i])
                if c != 0 { return c }
            }
            return a.count < b.count ? -1 : (a.count == b.count ? 0 : 1)
        default: return 0
        }
    }

    /// Unsigned byte order, a prefix first: `lexicographicallyPrecedes` by `memcmp`, which does not step through
    /// `Data` a byte at a time.
    private static func compareBytes(_ a: Data, _ b: Data) -> Int {
        let common = min(a.count, b.count)
        let order =
            common == 0
            ? 0
            : a.withUnsafeBytes { x in b.withUnsafeBytes { y in memcmp(x.baseAddress!, y.baseAddress!, common) } }
        if order != 0 { return order < 0 ? -1 : 1 }
        return a.count < b.count ? -1 : (a.count == b.count ? 0 : 1)
    }

    /// An integer against a double by their exact values: converting the integer to `Double` rounds it from 2^53 on,
    /// which would make 2^53 + 1 equal 2^53. NaN sorts above every number, as in `compareDoubles`.
    package static func compareExactly(_ a: Int64, _ b: Double) -> Int {
        if b.isNaN { return -1 }
        if b >= 9_223_372_036_854_775_808.0 { return -1 }
        if b < -9_223_372_036_854_775_808.0 { return 1 }
        // In range, so its integer part converts exactly; what is left of `b` breaks a tie.
        let whole = b.rounded(.towardZero)
        let integer = Int64(whole)
        if a != integer { return a < integer ? -1 : 1 }
        return b > whole ? -1 : (b < whole ? 1 : 0)
    }

    private static func compareDoubles(_ a: Double, _ b: Double) -> Int {
        if a < b { return -1 }
        if a > b { return 1 }
        if a == b { return 0 }
        // At least one NaN: NaN sorts last and equals itself, so the order stays total.
        return a.isNaN ? (b.isNaN ? 0 : 1) : -1
    }
}

extension Value {
    /// Equal values of the same case, bit for bit (NaN equals NaN, -0.0 differs from 0.0, `.int(1)` from
    /// `.double(1)`): the equality recovery must preserve, stricter than `==`.
    @inlinable public func isIdentical(to other: Value) -> Bool {
        // Numbers inline into the commit path of other modules (an update compares every value it sets); the rest
        // is a call.
        switch (self, other) {
        case (.int(let a), .int(let b)): return a == b
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN)
        default: return isIdenticalNonNumeric(to: other)
        }
    }

    @usableFromInline func isIdenticalNonNumeric(to other: Value) -> Bool {
        switch (self, other) {
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN)
        case (.date(let a), .date(let b)):
            return a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
        case (.int(let a), .int(let b)): return a == b
        case (.decimal(let a), .decimal(let b)): return a == b && a.description == b.description
        case (.data(let a), .data(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.list(let a), .list(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isIdentical(to: $1) }
        default: return typeRank == other.typeRank && !isNumber && !other.isNumber && self == other
        }
    }

    private var isNumber: Bool {
        switch self {
        case .int, .double, .decimal: return true
        default: return false
        }
    }
}

extension Value: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral
{
    /// A `.string`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An `.int`.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A `.double`.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A `.bool`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension Value: CustomStringConvertible {
    /// The value for people: strings quoted, dates in ISO 8601, data as its size.
    public var description: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return String(b)
        case .int(let i): return String(i)
        case .double(let d): return String(d)
        case .string(let s): return "\"\(s)\""
        case .date(let d): return d.ISO8601Format()
        case .data(let d): return "<\(d.count) bytes>"
        case .uuid(let u): return u.uuidString
        case .url(let u): return u.absoluteString
        case .decimal(let d): return d.description
        case .list(let elements): return "[" + elements.map(\.description).joined(separator: ", ") + "]"
        }
    }
}

import Foundation
import TrellisCore

/// How a scalar index encodes its attribute's values, and how it turns query bounds of any `Value` into encoded
/// bounds that select exactly what `Value`'s order selects.
@usableFromInline package enum ScalarCoding: Sendable {
    case int, double, date, bool

    @usableFromInline static let signBit: UInt64 = 1 << 63

    /// The coding for a required attribute of this type, or nil when the type needs a general index.
    init?(_ attribute: AttributeDescription) {
        guard !attribute.isOptional else { return nil }
        switch attribute.type {
        case .int, .int8, .int16, .int32, .int64: self = .int
        case .double, .float: self = .double
        case .date: self = .date
        case .bool: self = .bool
        default: return nil
        }
    }

    static func encode(_ i: Int64) -> UInt64 { UInt64(bitPattern: i) ^ signBit }

    static func encode(_ d: Double) -> UInt64 {
        // One NaN (sorting after +infinity, as in `Value`) and one zero (-0.0 == 0.0 in `Value`).
        let canonical = d.isNaN ? Double.nan : (d == 0 ? 0.0 : d)
        let bits = canonical.bitPattern
        return bits & signBit != 0 ? ~bits : bits | signBit
    }

    /// The encoding of a stored value of this index's kind (nil for a value of another case).
    func encode(_ value: Value) -> UInt64? {
        switch (self, value) {
        case (.int, .int(let i)): return Self.encode(i)
        case (.double, .double(let d)): return Self.encode(d)
        case (.date, .date(let d)): return Self.encode(d.timeIntervalSinceReferenceDate)
        case (.bool, .bool(let b)): return b ? 1 : 0
        default: return nil
        }
    }

    /// The stored value whose encoding is `bits`: `encode`'s inverse (a NaN and a zero come back as the one each
    /// encodes to).
    func decode(_ bits: UInt64) -> Value {
        switch self {
        case .int: return .int(Self.decodeInt(bits))
        case .double: return .double(Self.decodeDouble(bits))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Self.decodeDouble(bits)))
        case .bool: return .bool(bits != 0)
        }
    }

    @inlinable @inline(__always) static func decodeInt(_ bits: UInt64) -> Int64 { Int64(bitPattern: bits ^ signBit) }

    @inlinable @inline(__always) static func decodeDouble(_ bits: UInt64) -> Double {
        Double(bitPattern: bits & signBit != 0 ? bits ^ signBit : ~bits)
    }

    /// Where a bound lands in this index: everything, nothing, or an encoded key.
    enum Bound {
        case unbounded, empty
        case key(ScalarEntry)
    }

    /// Encodes a query bound. `lower` says which end it is; a bound between two representable values (2.5 on an
    /// integer index) rounds inward, and a value of another type sorts by `Value`'s type order.
    func bound(_ value: Value, lower: Bool, inclusive: Bool) -> Bound {
        let low: UInt64 = 0
        let high = UInt64.max
        func exact(_ bits: UInt64) -> Bound {
            .key(ScalarEntry(bits: bits, serial: lower == inclusive ? low : high))
        }
        let rank: UInt8 = self == .bool ? 1 : (self == .date ? 4 : 2)
        if value.typeRank != rank {
            // The whole index lies above (or below) the bound's type.
            let indexIsAbove = value.typeRank < rank
            return lower == indexIsAbove ? .unbounded : .empty
        }
        switch (self, value) {
        case (.bool, .bool(let b)): return exact(b ? 1 : 0)
        case (.date, .date(let d)): return exact(Self.encode(d.timeIntervalSinceReferenceDate))
        case (.double, .int(let i)):
            // The nearest double may lie on either side of an integer above 2^53: then the bound lies strictly
            // between two doubles, and is moved inward to the one on its side.
            let d = Double(i)
            switch Value.compareExactly(i, d) {
            case 0: return exact(Self.encode(d))
            case 1:
                return lower
                    ? .key(ScalarEntry(bits: Self.encode(d.nextUp), serial: low))
                    : .key(ScalarEntry(bits: Self.encode(d), serial: high))
            default:
                return lower
                    ? .key(ScalarEntry(bits: Self.encode(d), serial: low))
                    : .key(ScalarEntry(bits: Self.encode(d.nextDown), serial: high))
            }
        case (.double, _): return exact(Self.encode(value.doubleValue ?? Self.decimalDouble(value)))
        case (.int, .int(let i)): return exact(Self.encode(i))
        case (.int, _):
            let d = value.doubleValue ?? Self.decimalDouble(value)
            if d.isNaN { return lower ? .empty : .unbounded }
            if d >= 9_223_372_036_854_775_808.0 { return lower ? .empty : .unbounded }
            if d < -9_223_372_036_854_775_808.0 { return lower ? .unbounded : .empty }
            if d == d.rounded(.towardZero) { return exact(Self.encode(Int64(d))) }
            // Strictly between two integers: inclusivity no longer matters.
            return lower
                ? .key(ScalarEntry(bits: Self.encode(Int64(d.rounded(.up))), serial: low))
                : .key(ScalarEntry(bits: Self.encode(Int64(d.rounded(.down))), serial: high))
        default: return .empty
        }
    }

    private static func decimalDouble(_ value: Value) -> Double {
        if case .decimal(let d) = value { return NSDecimalNumber(decimal: d).doubleValue }
        return .nan
    }
}

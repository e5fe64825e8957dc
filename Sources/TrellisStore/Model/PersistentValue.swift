import Foundation
import TrellisCore
import TrellisGraph
import TrellisJournal

/// A Swift type that a model attribute can hold: it names its `AttributeType` and converts to and from `Value`.
///
/// The standard scalar types conform, and so does `Optional` of any of them (an optional attribute). An enum backed by
/// a persistent raw value conforms by declaring it; the raw value is what is stored and queried:
///
/// ```swift
/// enum Priority: Int, PersistentValue { case low, normal, high }
/// final class Chore: Model { @Attribute var priority = Priority.normal }
/// ```
public protocol PersistentValue: Sendable {
    /// The declared type of attributes holding this type.
    static var attributeType: AttributeType { get }
    /// Whether attributes of this type may hold null (only `Optional` says yes).
    static var isOptional: Bool { get }
    /// The value as the store holds it.
    var persistentValue: Value { get }
    /// Rebuilds a value from what the store holds; nil when `value` is not of this type.
    init?(persistentValue value: Value)
}

extension PersistentValue {
    public static var isOptional: Bool { false }
}

extension PersistentValue where Self: RawRepresentable, RawValue: PersistentValue {
    public static var attributeType: AttributeType { RawValue.attributeType }
    public var persistentValue: Value { rawValue.persistentValue }
    public init?(persistentValue value: Value) {
        guard let raw = RawValue(persistentValue: value) else { return nil }
        self.init(rawValue: raw)
    }
}

extension Optional: PersistentValue where Wrapped: PersistentValue {
    public static var attributeType: AttributeType { Wrapped.attributeType }
    public static var isOptional: Bool { true }
    public var persistentValue: Value { self?.persistentValue ?? .null }
    public init?(persistentValue value: Value) {
        if value.isNull {
            self = .none
            return
        }
        guard let wrapped = Wrapped(persistentValue: value) else { return nil }
        self = .some(wrapped)
    }
}

extension Bool: PersistentValue {
    public static var attributeType: AttributeType { .bool }
    public var persistentValue: Value { .bool(self) }
    public init?(persistentValue value: Value) {
        guard case .bool(let b) = value else { return nil }
        self = b
    }
}

extension String: PersistentValue {
    public static var attributeType: AttributeType { .string }
    public var persistentValue: Value { .string(self) }
    public init?(persistentValue value: Value) {
        guard case .string(let s) = value else { return nil }
        self = s
    }
}

extension Double: PersistentValue {
    public static var attributeType: AttributeType { .double }
    public var persistentValue: Value { .double(self) }
    public init?(persistentValue value: Value) {
        guard let d = value.doubleValue else { return nil }
        self = d
    }
}

extension Float: PersistentValue {
    public static var attributeType: AttributeType { .float }
    public var persistentValue: Value { .double(Double(self)) }
    public init?(persistentValue value: Value) {
        guard let d = value.doubleValue else { return nil }
        self = Float(d)
    }
}

extension Date: PersistentValue {
    public static var attributeType: AttributeType { .date }
    public var persistentValue: Value { .date(self) }
    public init?(persistentValue value: Value) {
        guard case .date(let d) = value else { return nil }
        self = d
    }
}

extension Data: PersistentValue {
    public static var attributeType: AttributeType { .data }
    public var persistentValue: Value { .data(self) }
    public init?(persistentValue value: Value) {
        guard case .data(let d) = value else { return nil }
        self = d
    }
}

extension UUID: PersistentValue {
    public static var attributeType: AttributeType { .uuid }
    public var persistentValue: Value { .uuid(self) }
    public init?(persistentValue value: Value) {
        guard case .uuid(let u) = value else { return nil }
        self = u
    }
}

extension URL: PersistentValue {
    public static var attributeType: AttributeType { .url }
    public var persistentValue: Value { .url(self) }
    public init?(persistentValue value: Value) {
        guard case .url(let u) = value else { return nil }
        self = u
    }
}

extension Decimal: PersistentValue {
    public static var attributeType: AttributeType { .decimal }
    public var persistentValue: Value { .decimal(self) }
    public init?(persistentValue value: Value) {
        switch value {
        case .decimal(let d): self = d
        case .int(let i): self = Decimal(i)
        default: return nil
        }
    }
}

/// Every fixed-width integer is stored as a 64-bit integer; the attribute type records the width, which commits check.
protocol PersistentInteger: PersistentValue, FixedWidthInteger {}

extension PersistentInteger {
    public var persistentValue: Value { .int(Int64(self)) }
    public init?(persistentValue value: Value) {
        guard case .int(let i) = value, let v = Self(exactly: i) else { return nil }
        self = v
    }
}

extension Int: PersistentValue, PersistentInteger {
    public static var attributeType: AttributeType { .int }
}

extension Int64: PersistentValue, PersistentInteger {
    public static var attributeType: AttributeType { .int64 }
}

extension Int32: PersistentValue, PersistentInteger {
    public static var attributeType: AttributeType { .int32 }
}

extension Int16: PersistentValue, PersistentInteger {
    public static var attributeType: AttributeType { .int16 }
}

extension Int8: PersistentValue, PersistentInteger {
    public static var attributeType: AttributeType { .int8 }
}

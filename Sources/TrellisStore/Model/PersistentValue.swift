import Foundation
import TrellisCore
import TrellisGraph
import TrellisJournal

/// A Swift type that a model attribute can hold: it names its `AttributeType` and converts to and from `Value`.
///
/// The standard scalar types conform, and so does `Optional` of any of them (an optional attribute). An enum backed by
/// a persistent raw value needs no conformance to be an attribute (`@Attribute` stores its raw value), but may declare
/// one to be used where a `PersistentValue` is asked for; the raw value is what is stored and queried either way:
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
    /// False by default: attributes of a non-optional type are required.
    public static var isOptional: Bool { false }
}

extension PersistentValue where Self: RawRepresentable, RawValue: PersistentValue {
    /// The raw value's type: the raw value is what is stored and queried.
    public static var attributeType: AttributeType { RawValue.attributeType }
    /// The raw value, as the store holds it.
    public var persistentValue: Value { rawValue.persistentValue }
    /// The case whose raw value the store holds; nil for a value of another type or a raw value with no case.
    public init?(persistentValue value: Value) {
        guard let raw = RawValue(persistentValue: value) else { return nil }
        self.init(rawValue: raw)
    }
}

extension Optional: PersistentValue where Wrapped: PersistentValue {
    /// The wrapped type's: an optional attribute has the type of what it wraps.
    public static var attributeType: AttributeType { Wrapped.attributeType }
    /// True: an optional attribute may hold null.
    public static var isOptional: Bool { true }
    /// The wrapped value's, or `Value.null` for nil.
    public var persistentValue: Value { self?.persistentValue ?? .null }
    /// Nil (the optional's `.none`) for `Value.null`, the wrapped value otherwise; fails for a value of another type.
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
    /// `AttributeType.bool`.
    public static var attributeType: AttributeType { .bool }
    /// `Value.bool(self)`.
    public var persistentValue: Value { .bool(self) }
    /// The value of a `.bool` value; nil for any other case.
    public init?(persistentValue value: Value) {
        guard case .bool(let b) = value else { return nil }
        self = b
    }
}

extension String: PersistentValue {
    /// `AttributeType.string`.
    public static var attributeType: AttributeType { .string }
    /// `Value.string(self)`.
    public var persistentValue: Value { .string(self) }
    /// The value of a `.string` value; nil for any other case.
    public init?(persistentValue value: Value) {
        guard case .string(let s) = value else { return nil }
        self = s
    }
}

extension Double: PersistentValue {
    /// `AttributeType.double`.
    public static var attributeType: AttributeType { .double }
    /// `Value.double(self)`.
    public var persistentValue: Value { .double(self) }
    /// The value of a `.double` value (or an `.int` one, converted); nil for any other case.
    public init?(persistentValue value: Value) {
        guard let d = value.doubleValue else { return nil }
        self = d
    }
}

extension Float: PersistentValue {
    /// `AttributeType.float`.
    public static var attributeType: AttributeType { .float }
    /// `Value.double`: a float is stored as a double.
    public var persistentValue: Value { .double(Double(self)) }
    /// The value of a `.double` value (or an `.int` one), narrowed to `Float`; nil for any other case.
    public init?(persistentValue value: Value) {
        guard let d = value.doubleValue else { return nil }
        self = Float(d)
    }
}

extension Date: PersistentValue {
    /// `AttributeType.date`.
    public static var attributeType: AttributeType { .date }
    /// `Value.date(self)`.
    public var persistentValue: Value { .date(self) }
    /// The value of a `.date` value; nil for any other case.
    public init?(persistentValue value: Value) {
        guard case .date(let d) = value else { return nil }
        self = d
    }
}

extension Data: PersistentValue {
    /// `AttributeType.data`.
    public static var attributeType: AttributeType { .data }
    /// `Value.data(self)`.
    public var persistentValue: Value { .data(self) }
    /// The value of a `.data` value; nil for any other case.
    public init?(persistentValue value: Value) {
        guard case .data(let d) = value else { return nil }
        self = d
    }
}

extension UUID: PersistentValue {
    /// `AttributeType.uuid`.
    public static var attributeType: AttributeType { .uuid }
    /// `Value.uuid(self)`.
    public var persistentValue: Value { .uuid(self) }
    /// The value of a `.uuid` value; nil for any other case.
    public init?(persistentValue value: Value) {
        guard case .uuid(let u) = value else { return nil }
        self = u
    }
}

extension URL: PersistentValue {
    /// `AttributeType.url`.
    public static var attributeType: AttributeType { .url }
    /// `Value.url(self)`.
    public var persistentValue: Value { .url(self) }
    /// The value of a `.url` value; nil for any other case.
    public init?(persistentValue value: Value) {
        guard case .url(let u) = value else { return nil }
        self = u
    }
}

extension Decimal: PersistentValue {
    /// `AttributeType.decimal`.
    public static var attributeType: AttributeType { .decimal }
    /// `Value.decimal(self)`.
    public var persistentValue: Value { .decimal(self) }
    /// The value of a `.decimal` value (or an `.int` one, converted); nil for any other case.
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
    /// `Value.int`: every fixed-width integer is stored as a 64-bit integer.
    public var persistentValue: Value { .int(Int64(self)) }
    /// The value of an `.int` value that fits this type exactly; nil otherwise.
    public init?(persistentValue value: Value) {
        guard case .int(let i) = value, let v = Self(exactly: i) else { return nil }
        self = v
    }
}

extension Int: PersistentValue, PersistentInteger {
    /// `AttributeType.int`: the width commits check values against.
    public static var attributeType: AttributeType { .int }
}

extension Int64: PersistentValue, PersistentInteger {
    /// `AttributeType.int64`: the width commits check values against.
    public static var attributeType: AttributeType { .int64 }
}

extension Int32: PersistentValue, PersistentInteger {
    /// `AttributeType.int32`: the width commits check values against.
    public static var attributeType: AttributeType { .int32 }
}

extension Int16: PersistentValue, PersistentInteger {
    /// `AttributeType.int16`: the width commits check values against.
    public static var attributeType: AttributeType { .int16 }
}

extension Int8: PersistentValue, PersistentInteger {
    /// `AttributeType.int8`: the width commits check values against.
    public static var attributeType: AttributeType { .int8 }
}

/// A type whose values can be the elements of a collection attribute: `String` (`[String]`, `Set<String>`) and `Int`
/// (`[Int]`).
public protocol PersistentElement: PersistentValue, Hashable {
    /// The attribute type of an array of this element type.
    static var arrayAttributeType: AttributeType { get }
}

extension String: PersistentElement {
    /// `AttributeType.stringArray`.
    public static var arrayAttributeType: AttributeType { .stringArray }
}

extension Int: PersistentElement {
    /// `AttributeType.intArray`.
    public static var arrayAttributeType: AttributeType { .intArray }
}

/// A collection attribute (`@Attribute var tags: [String] = []`): the elements in order, repeats kept. Predicates
/// test it with `contains` and `isEmpty`; an index on it holds each element.
extension Array: PersistentValue where Element: PersistentElement {
    /// `[String]` is `.stringArray`, `[Int]` is `.intArray`.
    public static var attributeType: AttributeType { Element.arrayAttributeType }
    /// `Value.list` of the elements' values.
    public var persistentValue: Value { .list(map(\.persistentValue)) }
    /// The elements of a `.list` value; nil for another case or an element of another type.
    public init?(persistentValue value: Value) {
        guard case .list(let elements) = value else { return nil }
        var out: [Element] = []
        out.reserveCapacity(elements.count)
        for e in elements {
            guard let element = Element(persistentValue: e) else { return nil }
            out.append(element)
        }
        self = out
    }
}

/// A set of strings (`@Attribute var labels: Set<String> = []`), stored as its distinct elements in ascending order.
extension Set: PersistentValue where Element == String {
    /// `AttributeType.stringSet`.
    public static var attributeType: AttributeType { .stringSet }
    /// `Value.list` of the elements, ascending.
    public var persistentValue: Value { .list(sorted().map(Value.string)) }
    /// The elements of a `.list` value of strings; nil for another case.
    public init?(persistentValue value: Value) {
        guard case .list(let elements) = value else { return nil }
        var out = Set<String>(minimumCapacity: elements.count)
        for e in elements {
            guard case .string(let s) = e else { return nil }
            out.insert(s)
        }
        self = out
    }
}

/// A type whose values can be the values of a dictionary attribute keyed by strings: `String` (`[String: String]`)
/// and `MetadataValue` (`[String: MetadataValue]`).
public protocol PersistentDictionaryValue: Sendable, Hashable {
    /// The attribute type of a dictionary from strings to this type.
    static var dictionaryAttributeType: AttributeType { get }
    /// The value as the store holds it after its key.
    var dictionaryElement: TrellisCore.Value { get }
    /// Rebuilds a value from what the store holds after a key; nil when it is not of this type.
    init?(dictionaryElement: TrellisCore.Value)
}

extension String: PersistentDictionaryValue {
    /// `AttributeType.stringDictionary`.
    public static var dictionaryAttributeType: AttributeType { .stringDictionary }
    /// `Value.string(self)`.
    public var dictionaryElement: TrellisCore.Value { .string(self) }
    /// The string of a `.string`; nil for any other case.
    public init?(dictionaryElement value: TrellisCore.Value) {
        guard case .string(let s) = value else { return nil }
        self = s
    }
}

extension MetadataValue: PersistentDictionaryValue {
    /// `AttributeType.metadataDictionary`.
    public static var dictionaryAttributeType: AttributeType { .metadataDictionary }
    /// The `Value` of the same case (`.null` for `.null`).
    public var dictionaryElement: TrellisCore.Value { value }
    /// The metadata value of a null, Boolean, number or string; nil for any other case.
    public init?(dictionaryElement value: TrellisCore.Value) { self.init(value) }
}

/// Open metadata (`@Attribute var metadata: [String: String] = [:]`, or `[String: MetadataValue]` for typed values):
/// stored as its keys in ascending order, each followed by its value. Predicates read one key
/// (`$0.metadata["color"] == "red"`, `$0.info["rating", default: .null] > 3`); an index on it holds each key–value
/// pair, so a key's value (equal, or in a range of one kind) and the presence of a key are answered from it.
extension Dictionary: PersistentValue where Key == String, Value: PersistentDictionaryValue {
    /// `AttributeType.stringDictionary` or `.metadataDictionary`, by the value type.
    public static var attributeType: AttributeType { Value.dictionaryAttributeType }
    /// `Value.list` of each key, ascending, then its value.
    public var persistentValue: TrellisCore.Value {
        var elements: [TrellisCore.Value] = []
        elements.reserveCapacity(count * 2)
        for key in keys.sorted() {
            elements.append(.string(key))
            elements.append(self[key]!.dictionaryElement)
        }
        return .list(elements)
    }
    /// The pairs of a `.list` value of keys and values; nil for another case, an odd count or a value of another type.
    public init?(persistentValue value: TrellisCore.Value) {
        guard case .list(let elements) = value, elements.count % 2 == 0 else { return nil }
        var out: [String: Value] = [:]
        out.reserveCapacity(elements.count / 2)
        for i in stride(from: 0, to: elements.count, by: 2) {
            guard case .string(let key) = elements[i], let v = Value(dictionaryElement: elements[i + 1]) else {
                return nil
            }
            out[key] = v
        }
        self = out
    }
}

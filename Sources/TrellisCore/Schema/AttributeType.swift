import Foundation

/// The declared type of an attribute. Raw values are part of the journal format: never renumber them.
public enum AttributeType: UInt8, Sendable, Codable, CaseIterable, CustomStringConvertible {
    case bool = 1
    case int = 2
    case int8 = 3
    case int16 = 4
    case int32 = 5
    case int64 = 6
    case double = 7
    case float = 8
    case string = 9
    case date = 10
    case data = 11
    case uuid = 12
    case url = 13
    case decimal = 14
    /// `[String]`: strings in order, repeats kept (format version 8).
    case stringArray = 15
    /// `[Int]`: integers in order, repeats kept (format version 8).
    case intArray = 16
    /// `Set<String>`: distinct strings, stored in ascending order (format version 8).
    case stringSet = 17
    /// `[String: String]`: open metadata, stored as its keys (ascending, distinct) each followed by its value
    /// (format version 8).
    case stringDictionary = 18
    /// `[String: MetadataValue]`: open metadata with typed values (null, bool, int, double or string), stored as its
    /// keys (ascending, distinct) each followed by its value (format version 9).
    case metadataDictionary = 19

    /// The Swift type's name (`"Int64"`, `"Date"`…).
    public var description: String {
        switch self {
        case .bool: return "Bool"
        case .int: return "Int"
        case .int8: return "Int8"
        case .int16: return "Int16"
        case .int32: return "Int32"
        case .int64: return "Int64"
        case .double: return "Double"
        case .float: return "Float"
        case .string: return "String"
        case .date: return "Date"
        case .data: return "Data"
        case .uuid: return "UUID"
        case .url: return "URL"
        case .decimal: return "Decimal"
        case .stringArray: return "[String]"
        case .intArray: return "[Int]"
        case .stringSet: return "Set<String>"
        case .stringDictionary: return "[String: String]"
        case .metadataDictionary: return "[String: MetadataValue]"
        }
    }

    /// The type of a collection's elements (`.string` for `[String]`); nil for a scalar type.
    public var elementType: AttributeType? {
        switch self {
        case .stringArray, .stringSet: return .string
        case .intArray: return .int
        default: return nil
        }
    }

    /// Whether values of this type are collections (`.list` values), which `isEmpty` queries; an index on one holds
    /// its elements (its key–value pairs, for a dictionary).
    public var isCollection: Bool { elementType != nil || isDictionary }

    /// Whether values of this type are dictionaries keyed by strings (`[String: String]`, `[String: MetadataValue]`),
    /// whose keys predicates read and whose index holds key–value pairs.
    public var isDictionary: Bool { self == .stringDictionary || self == .metadataDictionary }

    /// Whether `value` (not null) is a valid value of this type, after `normalized(_:)`.
    func accepts(_ value: Value) -> Bool {
        switch (self, value) {
        case (.bool, .bool), (.string, .string), (.date, .date), (.data, .data), (.uuid, .uuid), (.url, .url),
            (.decimal, .decimal), (.double, .double), (.float, .double):
            return true
        case (.int, .int), (.int64, .int): return true
        case (.int8, .int(let i)): return Int8(exactly: i) != nil
        case (.int16, .int(let i)): return Int16(exactly: i) != nil
        case (.int32, .int(let i)): return Int32(exactly: i) != nil
        case (.stringArray, .list(let elements)), (.intArray, .list(let elements)):
            return elements.allSatisfy { !$0.isNull && elementType!.accepts($0) }
        case (.stringSet, .list(let elements)):
            // Distinct and ascending: the one form a set is stored in, so equal sets are equal values.
            guard elements.allSatisfy({ $0.stringValue != nil }) else { return false }
            return zip(elements, elements.dropFirst()).allSatisfy { $0 < $1 }
        case (.stringDictionary, .list(let elements)):
            // Key, value, key, value…: strings, the keys ascending and distinct.
            guard elements.count % 2 == 0, elements.allSatisfy({ $0.stringValue != nil }) else { return false }
            let keys = stride(from: 0, to: elements.count, by: 2).map { elements[$0] }
            return zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 }
        case (.metadataDictionary, .list(let elements)):
            // Key, value, key, value…: string keys, ascending and distinct; each value a scalar a `MetadataValue`
            // holds (null included).
            guard elements.count % 2 == 0 else { return false }
            var previous: String?
            for i in stride(from: 0, to: elements.count, by: 2) {
                guard case .string(let key) = elements[i], MetadataValue(elements[i + 1]) != nil else { return false }
                if let previous, !(previous < key) { return false }
                previous = key
            }
            return true
        default: return false
        }
    }

    /// Converts loosely typed input (an integer literal given to a `Double` attribute, a `Double` given to a `Float`)
    /// to the form this type stores, as Swift converts it (an integer beyond 2^53 becomes the nearest `Double`);
    /// returns nil when the value does not fit the type at all.
    package func normalized(_ value: Value) -> Value? {
        switch (self, value) {
        case (_, .null): return .null
        case (.double, .int(let i)): return .double(Double(i))
        case (.float, .int(let i)): return .double(Double(Float(i)))
        case (.float, .double(let d)): return .double(Double(Float(d)))
        case (.decimal, .int(let i)): return .decimal(Decimal(i))
        case (.stringSet, .list(let elements)):
            // Any strings name a set: sorted and made distinct here.
            guard elements.allSatisfy({ $0.stringValue != nil }) else { return nil }
            return .list(Array(Set(elements)).sorted())
        default: return accepts(value) ? value : nil
        }
    }
}

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
        }
    }

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
        default: return false
        }
    }

    /// Converts loosely typed input (an integer literal given to a `Double` attribute, a `Double` given to a `Float`)
    /// to the form this type stores; returns nil when no lossless conversion exists.
    package func normalized(_ value: Value) -> Value? {
        switch (self, value) {
        case (_, .null): return .null
        case (.double, .int(let i)): return .double(Double(i))
        case (.float, .int(let i)): return .double(Double(Float(i)))
        case (.float, .double(let d)): return .double(Double(Float(d)))
        case (.decimal, .int(let i)): return .decimal(Decimal(i))
        default: return accepts(value) ? value : nil
        }
    }
}

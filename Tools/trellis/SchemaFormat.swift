import Foundation
import Trellis

/// The schema a store carries, as `info` prints it: readable lines, or JSON. A removed entity's placeholder (which
/// keeps the numbers of the entities after it) is left out: it is no entity, and a schema file made from this JSON
/// must not bring it back.
enum SchemaFormat {
    static func lines(_ schema: Schema) -> [String] {
        var out: [String] = []
        for entity in schema.entities where !entity.isRetired {
            out.append("  \(entity.name)")
            for a in entity.attributes {
                var text = "    \(a.name): \(a.type)\(a.isOptional ? "?" : "")"
                if let value = a.defaultValue { text += " = \(ValueFormat.text(value))" }
                out.append(text)
            }
            for r in entity.relationships {
                let target = r.isToMany ? "[\(r.target)]" : r.target
                var bounds = ""
                if r.minCount > 0 || r.maxCount != nil {
                    bounds = ", count \(r.minCount)…\(r.maxCount.map(String.init) ?? "")"
                }
                out.append("    \(r.name) → \(target) (inverse \(r.inverse), delete rule \(r.deleteRule)\(bounds))")
            }
            for index in entity.indexes {
                let kind = index.isUnique ? "unique" : "index"
                out.append("    \(kind) (\(index.attributes.joined(separator: ", ")))")
            }
        }
        return out
    }

    static func json(_ schema: Schema) -> JSON {
        .object([
            ("fingerprint", .string(StoreFileName.hex16(schema.fingerprint))),
            ("entities", .array(schema.entities.filter { !$0.isRetired }.map(entity))),
        ])
    }

    private static func entity(_ entity: EntityDescription) -> JSON {
        .object([
            ("name", .string(entity.name)),
            (
                "attributes",
                .array(
                    entity.attributes.map { a in
                        .object([
                            ("name", .string(a.name)), ("type", .string(a.type.description)),
                            ("optional", .bool(a.isOptional)),
                            ("default", a.defaultValue.map(ValueFormat.json) ?? .null),
                        ])
                    })
            ),
            (
                "relationships",
                .array(
                    entity.relationships.map { r in
                        var pairs: [(String, JSON)] = [
                            ("name", .string(r.name)), ("target", .string(r.target)), ("inverse", .string(r.inverse)),
                            ("toMany", .bool(r.isToMany)), ("deleteRule", .string(r.deleteRule.description)),
                            ("minCount", .int(r.minCount)), ("maxCount", r.maxCount.map { .int($0) } ?? .null),
                        ]
                        // Only an ordered relationship says so: the output for every other schema stays as it was.
                        if r.isOrdered { pairs.append(("ordered", .bool(true))) }
                        return .object(pairs)
                    })
            ),
            (
                "indexes",
                .array(
                    entity.indexes.map { index in
                        .object([
                            ("attributes", .array(index.attributes.map { .string($0) })),
                            ("unique", .bool(index.isUnique)),
                        ])
                    })
            ),
        ])
    }
}

/// A schema read from JSON in the format `SchemaFormat.json` writes (what `trellis info --json` prints under
/// `schema`), for `trellis migrate --to`: the same keys, plus an optional `originalName` on entities, attributes and
/// relationships (the name it had in the store, for a rename). `fingerprint` may be present and is ignored (it is
/// computed from the rest). Every error names the path of the offending field.
///
/// ```swift
/// let schema = try SchemaInput.parse(Data(#"{"entities": [{"name": "Note", "attributes": []}]}"#.utf8))
/// ```
enum SchemaInput {
    /// Why the JSON is not a schema; the message names the field (`entities[1].attributes[0].type: …`).
    struct Invalid: Error, CustomStringConvertible {
        let description: String

        init(_ path: String, _ message: String) { description = path.isEmpty ? message : "\(path): \(message)" }
    }

    /// The schema in the file at `path`; a file that cannot be read or is not a schema is a `UsageError` (exit 2)
    /// naming the file and, for a bad schema, the field.
    static func read(_ path: String) throws -> Schema {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw UsageError(
                "cannot read the schema file \(path): \(isDirectory.boolValue ? "a directory" : "no such file")")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw UsageError("cannot read the schema file \(path): \((error as NSError).localizedDescription)")
        }
        do {
            return try parse(data)
        } catch let error as Invalid {
            throw UsageError("\(path) is not a schema: \(error)")
        }
    }

    static func parse(_ data: Data) throws -> Schema {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw Invalid("", "not valid JSON (\(Self.reason(error)))")
        }
        var object = try Self.object(root, "")
        var path = ""
        // A whole `trellis info --json` document is accepted too: its `schema` member is the schema.
        if object["entities"] == nil, let schema = object["schema"] {
            path = "schema"
            object = try Self.object(schema, path)
        }
        try Self.known(object, ["fingerprint", "entities"], path)
        let prefix = path.isEmpty ? "" : path + "."
        let entityList = try Self.array(object["entities"], prefix + "entities", required: true)
        var entities: [EntityDescription] = []
        for (i, item) in entityList.enumerated() { entities.append(try entity(item, prefix + "entities[\(i)]")) }
        do {
            return try Schema(entities)
        } catch let error as TrellisError {
            throw Invalid("", "not a valid schema: \(error.message)")
        }
    }

    private static func entity(_ value: Any, _ path: String) throws -> EntityDescription {
        let o = try object(value, path)
        try known(o, ["name", "originalName", "attributes", "relationships", "indexes"], path)
        var entity = EntityDescription(
            try string(o["name"], "\(path).name"),
            originalName: try optionalString(o["originalName"], "\(path).originalName"))
        for (i, item) in try array(o["attributes"], "\(path).attributes").enumerated() {
            entity.attributes.append(try attribute(item, "\(path).attributes[\(i)]"))
        }
        for (i, item) in try array(o["relationships"], "\(path).relationships").enumerated() {
            entity.relationships.append(try relationship(item, "\(path).relationships[\(i)]"))
        }
        for (i, item) in try array(o["indexes"], "\(path).indexes").enumerated() {
            let p = "\(path).indexes[\(i)]"
            let index = try object(item, p)
            try known(index, ["attributes", "unique"], p)
            let names = try array(index["attributes"], "\(p).attributes", required: true).enumerated().map {
                try string($1, "\(p).attributes[\($0)]")
            }
            entity.indexes.append(
                IndexDescription(names, unique: try bool(index["unique"], "\(p).unique") ?? false))
        }
        return entity
    }

    private static func attribute(_ value: Any, _ path: String) throws -> AttributeDescription {
        let o = try object(value, path)
        try known(o, ["name", "type", "optional", "default", "originalName"], path)
        let typeName = try string(o["type"], "\(path).type")
        guard let type = AttributeType.allCases.first(where: { $0.description == typeName }) else {
            let names = AttributeType.allCases.map(\.description).joined(separator: ", ")
            throw Invalid("\(path).type", "'\(typeName)' is not a type; the types are \(names)")
        }
        let defaultValue = try o["default"].flatMap { try self.value($0, type, "\(path).default") }
        return AttributeDescription(
            try string(o["name"], "\(path).name"), type, optional: try bool(o["optional"], "\(path).optional") ?? false,
            default: defaultValue, originalName: try optionalString(o["originalName"], "\(path).originalName"))
    }

    private static func relationship(_ value: Any, _ path: String) throws -> RelationshipDescription {
        let o = try object(value, path)
        try known(
            o,
            ["name", "target", "inverse", "toMany", "ordered", "deleteRule", "minCount", "maxCount", "originalName"],
            path)
        let ruleName = try optionalString(o["deleteRule"], "\(path).deleteRule") ?? "nullify"
        let rules: [DeleteRule] = [.nullify, .cascade, .deny, .noAction]
        guard let rule = rules.first(where: { $0.description == ruleName }) else {
            let names = rules.map { "'\($0)'" }.joined(separator: ", ")
            throw Invalid("\(path).deleteRule", "'\(ruleName)' is not a delete rule; the rules are \(names)")
        }
        let toMany = try bool(o["toMany"], "\(path).toMany") ?? false
        let ordered = try bool(o["ordered"], "\(path).ordered") ?? false
        if ordered && !toMany { throw Invalid("\(path).ordered", "only a to-many relationship can be ordered") }
        let minCount = try integer(o["minCount"], "\(path).minCount", in: 0...Int64(Int32.max)).map { Int($0) } ?? 0
        let maxCount = try integer(o["maxCount"], "\(path).maxCount", in: 0...Int64(Int32.max)).map { Int($0) }
        if !toMany, let maxCount, maxCount != 1 {
            throw Invalid("\(path).maxCount", "a to-one relationship holds at most 1 target, not \(maxCount)")
        }
        return RelationshipDescription(
            try string(o["name"], "\(path).name"), to: try string(o["target"], "\(path).target"),
            inverse: try string(o["inverse"], "\(path).inverse"), toMany: toMany, ordered: ordered, deleteRule: rule,
            minCount: minCount, maxCount: maxCount,
            originalName: try optionalString(o["originalName"], "\(path).originalName"))
    }

    /// A default value, encoded as `ValueFormat.json` writes it for `type`; JSON null is no default.
    private static func value(_ json: Any, _ type: AttributeType, _ path: String) throws -> Value? {
        if json is NSNull { return nil }
        func wrong(_ expected: String) -> Invalid {
            Invalid(path, "the default of a \(type) attribute is \(expected), not \(describe(json))")
        }
        switch type {
        case .bool:
            guard let b = boolean(json) else { throw wrong("true or false") }
            return .bool(b)
        case .int, .int8, .int16, .int32, .int64:
            let ranges: [AttributeType: ClosedRange<Int64>] = [
                .int8: Int64(Int8.min)...Int64(Int8.max), .int16: Int64(Int16.min)...Int64(Int16.max),
                .int32: Int64(Int32.min)...Int64(Int32.max),
            ]
            guard let n = try integer(json, path, in: ranges[type] ?? Int64.min...Int64.max) else {
                throw wrong("a whole number")
            }
            return .int(n)
        case .double, .float:
            guard boolean(json) == nil, let n = json as? NSNumber else { throw wrong("a number") }
            return .double(n.doubleValue)
        case .string:
            guard let s = json as? String else { throw wrong("a string") }
            return .string(s)
        case .date:
            guard let s = json as? String, let date = timestamp(s) else {
                throw wrong("ISO 8601 UTC text such as \"2026-11-29T11:30:01.123456Z\"")
            }
            return .date(date)
        case .data:
            guard let s = json as? String, let data = Data(base64Encoded: s) else { throw wrong("base64 text") }
            return .data(data)
        case .uuid:
            guard let s = json as? String, let uuid = UUID(uuidString: s) else { throw wrong("UUID text") }
            return .uuid(uuid)
        case .url:
            guard let s = json as? String, let url = URL(string: s) else { throw wrong("URL text") }
            return .url(url)
        case .decimal:
            if let s = json as? String, let d = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")),
                !d.isNaN
            {
                return .decimal(d)
            }
            guard boolean(json) == nil, let n = json as? NSNumber else { throw wrong("decimal text or a number") }
            return .decimal(n.decimalValue)
        case .stringArray, .stringSet:
            guard let items = json as? [Any] else { throw wrong("an array of strings") }
            let elements = try items.map { item -> Value in
                guard let s = item as? String else { throw wrong("an array of strings") }
                return .string(s)
            }
            return type.normalized(.list(elements))
        case .stringDictionary:
            // As `ValueFormat.json` writes it: each key, ascending, followed by its value.
            guard let items = json as? [Any], let strings = items as? [String],
                let value = type.normalized(.list(strings.map(Value.string)))
            else { throw wrong("an array of each key, ascending, followed by its value") }
            return value
        case .metadataDictionary:
            // Each key, ascending, followed by its value: null, true/false, a number or a string.
            let expected = "an array of each key, ascending, followed by its value (null, a Boolean, number or string)"
            guard let items = json as? [Any], items.count % 2 == 0 else { throw wrong(expected) }
            var elements: [Value] = []
            for (i, item) in items.enumerated() {
                if i % 2 == 0 {
                    guard let key = item as? String else { throw wrong(expected) }
                    elements.append(.string(key))
                } else if item is NSNull {
                    elements.append(.null)
                } else if let b = boolean(item) {
                    elements.append(.bool(b))
                } else if let s = item as? String {
                    elements.append(.string(s))
                } else if let n = item as? NSNumber {
                    let type = String(cString: n.objCType)
                    elements.append(type == "d" || type == "f" ? .double(n.doubleValue) : .int(n.int64Value))
                } else {
                    throw wrong(expected)
                }
            }
            guard let value = type.normalized(.list(elements)) else { throw wrong(expected) }
            return value
        case .intArray:
            guard let items = json as? [Any] else { throw wrong("an array of whole numbers") }
            return .list(
                try items.map { item -> Value in
                    guard let n = try integer(item, path, in: Int64.min...Int64.max) else {
                        throw wrong("an array of whole numbers")
                    }
                    return .int(n)
                })
        }
    }

    /// `2026-11-29T11:30:01.123456Z`, or with fewer (or no) fraction digits.
    static func timestamp(_ text: String) -> Date? {
        let parts = text.split(separator: ".", maxSplits: 1)
        var base = String(parts[0])
        var fraction = 0.0
        if parts.count == 2 {
            guard parts[1].hasSuffix("Z"), parts[1].count >= 2 else { return nil }
            let digits = parts[1].dropLast()
            guard digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), let value = Double("0." + digits)
            else { return nil }
            fraction = value
            base += "Z"
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        guard let date = formatter.date(from: base) else { return nil }
        return date.addingTimeInterval(fraction)
    }

    // MARK: Field readers: each names the path of what is wrong.

    private static func object(_ value: Any, _ path: String) throws -> [String: Any] {
        guard let o = value as? [String: Any] else {
            throw Invalid(path, "expected a JSON object, found \(describe(value))")
        }
        return o
    }

    private static func known(_ object: [String: Any], _ keys: Set<String>, _ path: String) throws {
        if let unknown = object.keys.filter({ !keys.contains($0) }).sorted().first {
            let at = path.isEmpty ? "" : " in \(path)"
            throw Invalid(
                "", "unknown field '\(unknown)'\(at) (the fields are \(keys.sorted().joined(separator: ", ")))")
        }
    }

    private static func array(_ value: Any?, _ path: String, required: Bool = false) throws -> [Any] {
        guard let value, !(value is NSNull) else {
            if required { throw Invalid(path, "missing (an array is needed)") }
            return []
        }
        guard let a = value as? [Any] else { throw Invalid(path, "expected an array, found \(describe(value))") }
        return a
    }

    private static func string(_ value: Any?, _ path: String) throws -> String {
        guard let value, !(value is NSNull) else { throw Invalid(path, "missing (a string is needed)") }
        guard let s = value as? String else { throw Invalid(path, "expected a string, found \(describe(value))") }
        return s
    }

    private static func optionalString(_ value: Any?, _ path: String) throws -> String? {
        guard let value, !(value is NSNull) else { return nil }
        return try string(value, path)
    }

    private static func bool(_ value: Any?, _ path: String) throws -> Bool? {
        guard let value, !(value is NSNull) else { return nil }
        guard let b = boolean(value) else { throw Invalid(path, "expected true or false, found \(describe(value))") }
        return b
    }

    private static func integer(_ value: Any?, _ path: String, in range: ClosedRange<Int64>) throws -> Int64? {
        guard let value, !(value is NSNull) else { return nil }
        guard boolean(value) == nil, let n = value as? NSNumber else {
            throw Invalid(path, "expected a whole number, found \(describe(value))")
        }
        let exact: Int64
        switch String(cString: n.objCType) {
        case "d", "f":
            // 2.0 and 1e3 are whole numbers too.
            guard let whole = Int64(exactly: n.doubleValue) else {
                throw Invalid(path, "expected a whole number, found \(describe(value))")
            }
            exact = whole
        case "Q" where n.uint64Value > UInt64(Int64.max):
            throw Invalid(path, "\(n) is out of range (\(range.lowerBound)…\(range.upperBound))")
        default:
            exact = n.int64Value
        }
        guard range.contains(exact) else {
            throw Invalid(path, "\(exact) is out of range (\(range.lowerBound)…\(range.upperBound))")
        }
        return exact
    }

    /// A JSON true or false (JSONSerialization gives an NSNumber of type char for them, and for nothing else).
    private static func boolean(_ value: Any) -> Bool? {
        guard let n = value as? NSNumber, String(cString: n.objCType) == "c" else { return nil }
        return n.boolValue
    }

    private static func describe(_ value: Any) -> String {
        switch value {
        case is NSNull: return "null"
        case let s as String: return "the string \"\(s)\""
        case is [Any]: return "an array"
        case is [String: Any]: return "an object"
        case let n as NSNumber: return boolean(n).map { "\($0)" } ?? "the number \(n)"
        default: return "\(value)"
        }
    }

    private static func reason(_ error: any Error) -> String {
        let ns = error as NSError
        return (ns.userInfo[NSDebugDescriptionErrorKey] as? String) ?? ns.localizedDescription
    }
}

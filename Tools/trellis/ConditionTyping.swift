import Foundation
import Trellis

/// Checks a parsed `--where` condition against a schema and builds the library's `DynamicQuery.Condition`: every name
/// must reach an attribute of the entity (through to-one relationships), and every value is converted to that
/// attribute's type as an insert would take it. Text is read as a date (ISO 8601), UUID, URL, decimal or base64
/// bytes where the attribute is one of those, so a shell user can write `due < "2026-12-01"`.
struct ConditionTyping {
    let schema: Schema
    /// The entity queried.
    let entity: EntityDescription

    func condition(_ syntax: ConditionSyntax) throws(ConditionError) -> DynamicQuery.Condition {
        switch syntax {
        case .compare(let name, let op, let literal):
            let attribute = try self.attribute(name)
            let value = try self.value(literal, for: attribute, name)
            if value.isNull, op != .equal, op != .notEqual {
                throw ConditionError(
                    message: "'\(op.rawValue)' with null matches nothing; test for null with == null or != null",
                    column: literal.column)
            }
            switch op {
            case .equal: return .equal(name.text, value)
            case .notEqual: return .notEqual(name.text, value)
            case .less: return .less(name.text, value)
            case .lessOrEqual: return .lessOrEqual(name.text, value)
            case .greater: return .greater(name.text, value)
            case .greaterOrEqual: return .greaterOrEqual(name.text, value)
            }
        case .among(let name, let literals):
            let attribute = try self.attribute(name)
            return .among(
                name.text,
                try literals.map { literal throws(ConditionError) in
                    try value(literal, for: attribute, name)
                })
        case .contains(let name, let literal):
            let attribute = try self.attribute(name)
            guard let element = attribute.type.elementType else {
                throw ConditionError(
                    message: "'\(name.text)' is \(attribute.type), not a collection: 'contains' tests [String], [Int] "
                        + "or Set<String>", column: name.column)
            }
            if case .null = literal.kind {
                throw ConditionError(message: "a collection holds no null elements", column: literal.column)
            }
            return .contains(name.text, try value(literal, for: AttributeDescription(name.text, element), name))
        case .isEmpty(let name):
            let attribute = try self.attribute(name)
            guard attribute.type.isCollection else {
                throw ConditionError(
                    message: "'\(name.text)' is \(attribute.type), not a collection: 'isEmpty' tests [String], [Int], "
                        + "Set<String> or a dictionary", column: name.column)
            }
            return .isEmpty(name.text)
        case .key(let name, let keyLiteral, let op, let literal):
            let attribute = try self.attribute(name)
            guard attribute.type.isDictionary, case .string(let key) = keyLiteral.kind else {
                throw ConditionError(
                    message: "'\(name.text)' is \(attribute.type), not a dictionary: '[\"key\"]' reads "
                        + "[String: String] or [String: MetadataValue]", column: name.column)
            }
            let value = try metadataValue(literal, for: attribute, name)
            switch (op, value) {
            // A missing key is null, as nil in Swift: `== null` is a missing key, `!= null` a present one.
            case (.equal, nil): return .not(.entry(name.text, key: key, .null))
            case (.notEqual, nil): return .entry(name.text, key: key, .null)
            case (_, nil):
                throw ConditionError(
                    message: "'\(op.rawValue)' with null matches nothing; test for a key with != null or == null",
                    column: literal.column)
            case (_, let v?):
                let test = DynamicQuery.KeyTest(rawValue: op.rawValue)!
                return .keyValue(name.text, key: key, test, v)
            }
        case .and(let parts): return .and(try parts.map { part throws(ConditionError) in try condition(part) })
        case .or(let parts): return .or(try parts.map { part throws(ConditionError) in try condition(part) })
        case .not(let inner): return .not(try condition(inner))
        }
    }

    /// The attribute a name reaches: each step but the last a to-one relationship, the last an attribute.
    func attribute(_ name: ConditionName) throws(ConditionError) -> AttributeDescription {
        var current = entity
        var column = name.column
        let parts = name.text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for (i, part) in parts.enumerated() {
            let isLast = i == parts.count - 1
            // A composite's field is an attribute whose name is the rest of the path (`address.city`).
            let rest = parts[i...].joined(separator: ".")
            if let attribute = current.attributes.first(where: { $0.name == rest }) { return attribute }
            func fail(_ message: String) -> ConditionError { ConditionError(message: message, column: column) }
            if isLast {
                if let attribute = current.attributes.first(where: { $0.name == part }) { return attribute }
                if let r = current.relationships.first(where: { $0.name == part }) {
                    let example =
                        (try? schema.entityNumber(r.target)).map { schema.entities[Int($0)] }?
                        .attributes.first.map { " such as \(name.text).\($0.name)" } ?? ""
                    throw fail(
                        "'\(part)' is a relationship of \(current.name); compare an attribute of \(r.target)\(example)")
                }
                throw fail(
                    "\(current.name) has no attribute '\(part)' (its attributes: \(Self.list(current.attributes.map(\.name))))"
                )
            }
            guard let r = current.relationships.first(where: { $0.name == part }) else {
                if current.attributes.contains(where: { $0.name == part }) {
                    throw fail(
                        "'\(part)' is an attribute of \(current.name); only to-one relationships are followed with '.'")
                }
                throw fail(
                    "\(current.name) has no relationship '\(part)' (its relationships: "
                        + "\(Self.list(current.relationships.map(\.name))))")
            }
            guard !r.isToMany else {
                throw fail("'\(part)' is a to-many relationship; a path follows to-one relationships only")
            }
            guard let target = try? schema.entityNumber(r.target) else {
                throw fail("'\(part)' leads to \(r.target), which the schema does not have")
            }
            current = schema.entities[Int(target)]
            column += part.count + 1
        }
        // `split` without omitting empties gives at least one part: the loop always returns or throws.
        throw ConditionError(message: "an empty name", column: name.column)
    }

    private static func list(_ names: [String]) -> String { names.isEmpty ? "none" : names.joined(separator: ", ") }

    /// `literal` as a dictionary's value (a string, or for `[String: MetadataValue]` also a number or Boolean); nil
    /// for `null`, which a condition reads as a missing key.
    func metadataValue(
        _ literal: ConditionLiteral, for attribute: AttributeDescription, _ name: ConditionName
    ) throws(ConditionError) -> MetadataValue? {
        let typed = attribute.type == .metadataDictionary
        func fail() -> ConditionError {
            ConditionError(
                message: "'\(name.text)' is \(attribute.type); its values are "
                    + (typed ? "text in quotes, numbers, true or false" : "text in quotes")
                    + ", not \(literal.text)", column: literal.column)
        }
        switch literal.kind {
        case .null: return nil
        case .string(let s): return .string(s)
        case .bool(let b) where typed: return .bool(b)
        case .number(let text, let whole) where typed:
            if whole, let n = Int64(text) { return .int(n) }
            guard let d = Double(text) else { throw fail() }
            return .double(d)
        default: throw fail()
        }
    }

    /// `literal` as a value of `attribute`'s type, or why it is not one.
    func value(
        _ literal: ConditionLiteral, for attribute: AttributeDescription, _ name: ConditionName
    ) throws(ConditionError) -> Value {
        let type = attribute.type
        func fail(_ why: String) -> ConditionError {
            ConditionError(message: "'\(name.text)' is \(type); \(literal.text) \(why)", column: literal.column)
        }
        var converted: Value?
        switch (type, literal.kind) {
        case (_, .null): return .null
        case (.bool, .bool(let b)): converted = .bool(b)
        case (.int, .number(let text, whole: true)), (.int8, .number(let text, whole: true)),
            (.int16, .number(let text, whole: true)),
            (.int32, .number(let text, whole: true)), (.int64, .number(let text, whole: true)):
            guard let n = Int64(text) else { throw fail("is out of range") }
            converted = .int(n)
        case (.double, .number(let text, _)), (.float, .number(let text, _)):
            converted = Double(text).map { .double($0) }
        case (.decimal, .number(let text, _)), (.decimal, .string(let text)):
            converted = Self.decimal(text).map { .decimal($0) }
        case (.string, .string(let s)): converted = .string(s)
        case (.date, .string(let s)): converted = Self.date(s).map { .date($0) }
        case (.uuid, .uuid(let u)): converted = .uuid(u)
        case (.uuid, .string(let s)): converted = UUID(uuidString: s).map { .uuid($0) }
        case (.url, .string(let s)): converted = URL(string: s).map { .url($0) }
        case (.data, .bytes(let d)): converted = .data(d)
        case (.data, .string(let s)): converted = Data(base64Encoded: s).map { .data($0) }
        default: break
        }
        guard let converted else { throw fail("is not one (write \(Self.expected(type)))") }
        // The library's own conversion, as an insert's: it refuses what the type cannot hold (300 for an Int8).
        guard let normalized = type.normalized(converted) else { throw fail("does not fit") }
        return normalized
    }

    /// What a value of `type` is written as, for messages.
    static func expected(_ type: AttributeType) -> String {
        switch type {
        case .bool: return "true or false"
        case .int, .int8, .int16, .int32, .int64: return "a whole number"
        case .double, .float: return "a number"
        case .decimal: return "a number, or decimal text"
        case .string: return "text in quotes"
        case .date: return "ISO 8601 text such as \"2026-11-29\" or \"2026-11-29T11:30:00Z\""
        case .data: return "0x and hexadecimal bytes, or base64 text"
        case .uuid: return "a UUID, bare or in quotes"
        case .url: return "URL text"
        case .stringArray, .intArray, .stringSet, .stringDictionary, .metadataDictionary:
            return "a collection (not comparable in a condition)"
        }
    }

    /// `12`, `-0.5`, `1e3`: plain decimal text only (no `nan`, no trailing letters, which `Decimal(string:)` skips).
    static func decimal(_ text: String) -> Decimal? {
        guard !text.isEmpty, text.allSatisfy({ "0123456789.-+eE".contains($0) }), Double(text) != nil else {
            return nil
        }
        return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
    }

    /// `2026-11-29` (midnight UTC), `2026-11-29T11:30:01Z`, with a fraction of a second and with an offset such as
    /// `+02:00` instead of `Z`.
    static func date(_ text: String) -> Date? {
        if let date = SchemaInput.timestamp(text) { return date }
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        for options: ISO8601DateFormatter.Options in [
            [.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds], [.withFullDate],
        ] {
            formatter.formatOptions = options
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}

import Foundation

/// A `trellis find --where` condition as written: names and values with the columns they start at, not yet checked
/// against a schema (`ConditionTyping` does that, and converts each value to its attribute's type).
///
/// ```swift
/// let syntax = try ConditionParser.parse(#"title == "Buy milk" && (stars >= 3 or due == null)"#)
/// // .and([.compare(title, .equal, "Buy milk"), .or([.compare(stars, .greaterOrEqual, 3), .compare(due, .equal, null)])])
/// ```
indirect enum ConditionSyntax: Equatable {
    case compare(ConditionName, Comparison, ConditionLiteral)
    /// `name in [v, …]`; `name not in […]` is `.not(.among(…))`.
    case among(ConditionName, [ConditionLiteral])
    /// `tags contains "beach"`: a collection attribute holds the element.
    case contains(ConditionName, ConditionLiteral)
    /// `tags isEmpty` (or `tags.isEmpty`): a collection attribute holds no element.
    case isEmpty(ConditionName)
    /// `metadata["color"] == "red"`: a dictionary attribute's value for a key (the literal's string), compared.
    case key(ConditionName, ConditionLiteral, Comparison, ConditionLiteral)
    case and([ConditionSyntax])
    case or([ConditionSyntax])
    case not(ConditionSyntax)

    enum Comparison: String, Equatable {
        case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    }
}

/// An attribute name, or a path through to-one relationships (`project.name`), and its column.
struct ConditionName: Equatable {
    var text: String
    var column: Int
}

/// A value as written, and its column. Numbers keep their text, so that a `Decimal` attribute gets every digit and an
/// integer too large for `Int64` can still be compared with a `Double` or `Decimal` one.
struct ConditionLiteral: Equatable {
    enum Kind: Equatable {
        case string(String)
        /// `42`, `-7`: `whole` is true; `2.5`, `1e3`: false.
        case number(String, whole: Bool)
        case bool(Bool)
        case null
        case uuid(UUID)
        /// `0x48656c6c6f`
        case bytes(Data)
    }

    var kind: Kind
    /// The literal as it appears in the condition, for messages.
    var text: String
    var column: Int
}

/// Why a condition was refused, and the column (1-based, in characters) the problem starts at.
struct ConditionError: Error, Equatable {
    var message: String
    var column: Int

    /// `--where: MESSAGE (column N)`, then the condition with a caret under the column.
    func rendered(_ source: String) -> String {
        let caret = String(repeating: " ", count: max(0, column - 1)) + "^"
        return "--where: \(message) (column \(column))\n  \(source)\n  \(caret)"
    }
}

/// Parses the condition language of `trellis find --where`:
///
/// ```text
/// condition  := or
/// or         := and (("||" | "or") and)*
/// and        := unary (("&&" | "and") unary)*
/// unary      := ("!" | "not") unary | "(" condition ")" | comparison
/// comparison := NAME ("==" | "!=" | "<" | "<=" | ">" | ">=") value | NAME ["not"] "in" "[" [value ("," value)*] "]"
///             | NAME "contains" value | NAME "isEmpty" | NAME ".isEmpty"
///             | NAME "[" "text" "]" ("==" | "!=" | "<" | "<=" | ">" | ">=") value
/// value      := "text" | 'text' | 42 | -2.5 | 1e3 | true | false | null | nil | UUID | 0xHEX
/// ```
///
/// `contains` and `isEmpty` test a collection attribute (`[String]`, `[Int]`, `Set<String>`); `NAME["key"]` reads a
/// dictionary attribute's key (`[String: String]`, `[String: MetadataValue]`), null when the key is missing.
///
/// Strings take the escapes `\"`, `\'`, `\\`, `\n`, `\r`, `\t`, `\0` and `\u{…}`; a name is letters, digits and
/// `_` (not starting with a digit), with dots between the steps of a to-one path. `and`, `or`, `not`, `in`, `true`,
/// `false`, `null` and `nil` are words of the language, not names.
struct ConditionParser {
    enum Token: Equatable {
        case name(String)
        case literal(ConditionLiteral.Kind)
        /// `==` `!=` `<` `<=` `>` `>=` `&&` `||` `!` `(` `)` `[` `]` `,`
        case symbol(String)
        case end
    }

    struct Located: Equatable {
        var token: Token
        var text: String
        var column: Int
    }

    static let keywords: Set<String> = ["and", "or", "not", "in", "true", "false", "null", "nil"]

    private let tokens: [Located]
    private var position = 0

    /// The syntax tree of `source`, or the first problem in it.
    static func parse(_ source: String) throws(ConditionError) -> ConditionSyntax {
        var lexer = ConditionLexer(source)
        var parser = ConditionParser(tokens: try lexer.tokens())
        let condition = try parser.or()
        guard parser.current.token == .end else {
            throw parser.error(
                "expected '&&', '||' or the end of the condition, found \(parser.describe(parser.current))")
        }
        return condition
    }

    private init(tokens: [Located]) { self.tokens = tokens }

    private var current: Located { tokens[position] }

    private mutating func advance() { position = min(position + 1, tokens.count - 1) }

    /// Consumes the current token when it is one of `symbols` or of the words `words`.
    private mutating func accept(_ symbols: [String], _ words: [String] = []) -> Bool {
        switch current.token {
        case .symbol(let s) where symbols.contains(s), .name(let s) where words.contains(s):
            advance()
            return true
        default:
            return false
        }
    }

    private func error(_ message: String, at column: Int? = nil) -> ConditionError {
        ConditionError(message: message, column: column ?? current.column)
    }

    private func describe(_ token: Located) -> String {
        switch token.token {
        case .end: return "the end of the condition"
        case .name(let n) where Self.keywords.contains(n): return "'\(n)'"
        case .name(let n): return "the name '\(n)'"
        case .literal: return "the value \(token.text)"
        case .symbol(let s): return "'\(s)'"
        }
    }

    private mutating func or() throws(ConditionError) -> ConditionSyntax {
        var parts = [try and()]
        while accept(["||"], ["or"]) { parts.append(try and()) }
        return parts.count == 1 ? parts[0] : .or(parts)
    }

    private mutating func and() throws(ConditionError) -> ConditionSyntax {
        var parts = [try unary()]
        while accept(["&&"], ["and"]) { parts.append(try unary()) }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    private mutating func unary() throws(ConditionError) -> ConditionSyntax {
        if accept(["!"], ["not"]) { return .not(try unary()) }
        let open = current
        if accept(["("]) {
            let inner = try or()
            guard accept([")"]) else {
                throw error(
                    "expected ')' to close the '(' at column \(open.column), found \(describe(current))")
            }
            return inner
        }
        guard case .name(let text) = current.token, !Self.keywords.contains(text) else {
            throw error(
                "expected a comparison such as title == \"Buy milk\", a '(' or 'not', found \(describe(current))")
        }
        // `tags.isEmpty`, Swift's spelling, is the name `tags` and the test.
        if text.hasSuffix(".isEmpty"), text.count > ".isEmpty".count {
            let name = ConditionName(text: String(text.dropLast(".isEmpty".count)), column: current.column)
            advance()
            return .isEmpty(name)
        }
        let name = ConditionName(text: text, column: current.column)
        advance()
        return try comparison(name)
    }

    private mutating func comparison(_ name: ConditionName) throws(ConditionError) -> ConditionSyntax {
        if accept(["["]) {
            let key = current
            guard case .literal(.string) = key.token else {
                throw error("expected a key in quotes after '\(name.text)[', found \(describe(current))")
            }
            let literal = try literal(after: "'['")
            guard accept(["]"]) else { throw error("expected ']' after the key, found \(describe(current))") }
            guard case .symbol(let s) = current.token, let op = ConditionSyntax.Comparison(rawValue: s) else {
                throw error(
                    "expected a comparison (==, !=, <, <=, >, >=) after '\(name.text)[\(key.text)]', found "
                        + describe(current))
            }
            let opToken = current
            advance()
            return .key(name, literal, op, try self.literal(after: "'\(opToken.text)'"))
        }
        if accept([], ["contains"]) { return .contains(name, try literal(after: "'contains'")) }
        if accept([], ["isEmpty"]) { return .isEmpty(name) }
        if case .symbol(let s) = current.token, let op = ConditionSyntax.Comparison(rawValue: s) {
            let opToken = current
            advance()
            return .compare(name, op, try literal(after: "'\(opToken.text)'"))
        }
        if accept([], ["in"]) { return .among(name, try list()) }
        if case .name("not") = current.token, position + 1 < tokens.count, tokens[position + 1].token == .name("in") {
            advance()
            advance()
            return .not(.among(name, try list()))
        }
        throw error(
            "expected a comparison (==, !=, <, <=, >, >=, in, not in, contains, isEmpty) after '\(name.text)', found "
                + describe(current))
    }

    private mutating func literal(after what: String) throws(ConditionError) -> ConditionLiteral {
        let token = current
        let kind: ConditionLiteral.Kind
        switch token.token {
        case .literal(let k): kind = k
        case .name("true"): kind = .bool(true)
        case .name("false"): kind = .bool(false)
        case .name("null"), .name("nil"): kind = .null
        default:
            throw error(
                "expected a value (\"text\", a number, true, false, null, a UUID or 0x bytes) after \(what), found "
                    + describe(token))
        }
        advance()
        return ConditionLiteral(kind: kind, text: token.text, column: token.column)
    }

    private mutating func list() throws(ConditionError) -> [ConditionLiteral] {
        guard accept(["["]) else {
            throw error("expected '[' to start the list after 'in', found \(describe(current))")
        }
        var values: [ConditionLiteral] = []
        if accept(["]"]) { return values }
        repeat {
            values.append(try literal(after: values.isEmpty ? "'['" : "','"))
        } while accept([","])
        guard accept(["]"]) else { throw error("expected ',' or ']' in the list, found \(describe(current))") }
        return values
    }
}

/// Splits a condition into tokens, each with its text and column.
struct ConditionLexer {
    private let characters: [Character]
    private var i = 0

    init(_ source: String) { characters = Array(source) }

    private func peek(_ offset: Int = 0) -> Character? {
        i + offset < characters.count ? characters[i + offset] : nil
    }

    private static func isNameStart(_ c: Character) -> Bool { c == "_" || c.isLetter }
    private static func isNamePart(_ c: Character) -> Bool { c == "_" || c.isLetter || c.isNumber }
    private static func isDigit(_ c: Character?) -> Bool { c.map { $0.isASCII && $0.isNumber } ?? false }

    mutating func tokens() throws(ConditionError) -> [ConditionParser.Located] {
        var out: [ConditionParser.Located] = []
        while true {
            while let c = peek(), c.isWhitespace { i += 1 }
            let start = i
            guard let c = peek() else {
                out.append(.init(token: .end, text: "", column: start + 1))
                return out
            }
            let token: ConditionParser.Token
            if c == "\"" || c == "'" {
                token = .literal(.string(try string(quote: c)))
            } else if c == "0", peek(1) == "x" || peek(1) == "X" {
                token = .literal(.bytes(try bytes()))
            } else if let uuid = uuid() {
                token = .literal(.uuid(uuid))
            } else if Self.isDigit(c) || (c == "-" && Self.isDigit(peek(1))) {
                token = .literal(try number())
            } else if Self.isNameStart(c) {
                token = .name(try name())
            } else {
                token = .symbol(try symbol())
            }
            out.append(.init(token: token, text: String(characters[start..<i]), column: start + 1))
        }
    }

    private func fail(_ message: String, at index: Int) -> ConditionError {
        ConditionError(message: message, column: index + 1)
    }

    private mutating func string(quote: Character) throws(ConditionError) -> String {
        let open = i
        i += 1
        var out = ""
        while let c = peek() {
            i += 1
            if c == quote { return out }
            guard c == "\\" else {
                out.append(c)
                continue
            }
            guard let e = peek() else { break }
            i += 1
            switch e {
            case "\"", "'", "\\": out.append(e)
            case "n": out.append("\n")
            case "r": out.append("\r")
            case "t": out.append("\t")
            case "0": out.append("\0")
            case "u":
                guard peek() == "{", let close = characters[i...].firstIndex(of: "}"),
                    let n = UInt32(String(characters[(i + 1)..<close]), radix: 16), let scalar = Unicode.Scalar(n)
                else {
                    throw fail("'\\u' takes a hexadecimal code point in braces, as in \\u{e9}", at: i - 2)
                }
                out.unicodeScalars.append(scalar)
                i = close + 1
            default:
                throw fail(
                    "unknown escape '\\\(e)' (the escapes are \\\", \\', \\\\, \\n, \\r, \\t, \\0 and \\u{…})",
                    at: i - 2)
            }
        }
        throw fail("the string that starts here has no closing \(quote)", at: open)
    }

    private mutating func bytes() throws(ConditionError) -> Data {
        let start = i
        i += 2
        var digits: [UInt8] = []
        while let c = peek(), let d = c.hexDigitValue, c.isASCII {
            digits.append(UInt8(d))
            i += 1
        }
        if let c = peek(), Self.isNamePart(c) { throw fail("'\(c)' is not a hexadecimal digit", at: i) }
        guard digits.count % 2 == 0 else {
            throw fail("0x bytes take two hexadecimal digits per byte; this has \(digits.count)", at: start)
        }
        return Data(stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] })
    }

    /// A UUID written bare (8-4-4-4-12 hexadecimal digits) at the current position, consumed; nil when there is none.
    private mutating func uuid() -> UUID? {
        guard i + 36 <= characters.count, characters[i].isHexDigit else { return nil }
        if let after = peek(36), Self.isNamePart(after) || after == "-" { return nil }
        guard let uuid = UUID(uuidString: String(characters[i..<(i + 36)])) else { return nil }
        i += 36
        return uuid
    }

    private mutating func number() throws(ConditionError) -> ConditionLiteral.Kind {
        let start = i
        if peek() == "-" { i += 1 }
        while Self.isDigit(peek()) { i += 1 }
        var whole = true
        if peek() == ".", Self.isDigit(peek(1)) {
            whole = false
            i += 1
            while Self.isDigit(peek()) { i += 1 }
        }
        if peek() == "e" || peek() == "E" {
            let sign = peek(1) == "+" || peek(1) == "-" ? 1 : 0
            guard Self.isDigit(peek(1 + sign)) else { throw fail("an exponent needs digits after 'e'", at: i) }
            whole = false
            i += 1 + sign
            while Self.isDigit(peek()) { i += 1 }
        }
        if let c = peek(), Self.isNamePart(c) || c == "." {
            throw fail("unexpected '\(c)' in the number \(String(characters[start..<i]))", at: i)
        }
        return .number(String(characters[start..<i]), whole: whole)
    }

    private mutating func name() throws(ConditionError) -> String {
        let start = i
        while true {
            while let c = peek(), Self.isNamePart(c) { i += 1 }
            guard peek() == "." else { break }
            guard let next = peek(1), Self.isNameStart(next) else {
                throw fail("a '.' in a name must be followed by the next name of the path", at: i)
            }
            i += 1
        }
        return String(characters[start..<i])
    }

    private mutating func symbol() throws(ConditionError) -> String {
        let c = peek()!
        let pair = peek(1).map { String([c, $0]) } ?? ""
        if ["==", "!=", "<=", ">=", "&&", "||"].contains(pair) {
            i += 2
            return pair
        }
        if "<>!()[],".contains(c) {
            i += 1
            return String(c)
        }
        switch c {
        case "=": throw fail("'=' alone is not an operator; compare with '=='", at: i)
        case "&": throw fail("'&' alone is not an operator; write '&&' or 'and'", at: i)
        case "|": throw fail("'|' alone is not an operator; write '||' or 'or'", at: i)
        default: throw fail("unexpected character '\(c)'", at: i)
        }
    }
}

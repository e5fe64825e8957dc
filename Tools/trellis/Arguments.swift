/// A command's arguments, consumed as the command parses them: options first (`flag`, `value`, `number`), then
/// positionals, then `finish()`, which refuses anything left over. Every refusal is a `UsageError` (exit 2).
///
/// `--name value` and `--name=value` are both accepted; `--` ends the options, so a store may be named `-x`.
///
/// ```swift
/// var arguments = Arguments(["--from", "3", "store"])
/// let from = try arguments.number("--from", as: UInt64.self)   // 3
/// let store = try arguments.positional("STORE")                // "store"
/// try arguments.finish()
/// ```
struct Arguments {
    private struct Word {
        var text: String
        var isOption: Bool
    }

    private var words: [Word] = []

    init(_ words: some Sequence<String>) {
        var onlyPositionals = false
        for word in words {
            if onlyPositionals || !word.hasPrefix("-") || word == "-" {
                self.words.append(Word(text: word, isOption: false))
            } else if word == "--" {
                onlyPositionals = true
            } else if word.hasPrefix("--"), let equals = word.firstIndex(of: "=") {
                self.words.append(Word(text: String(word[..<equals]), isOption: true))
                self.words.append(Word(text: String(word[word.index(after: equals)...]), isOption: false))
            } else {
                self.words.append(Word(text: word, isOption: true))
            }
        }
    }

    /// Whether any of `names` was given (consumed wherever it appears).
    mutating func flag(_ names: String...) -> Bool {
        let before = words.count
        words.removeAll { $0.isOption && names.contains($0.text) }
        return words.count != before
    }

    /// The value after the option `name`, or nil when the option is absent.
    mutating func value(_ name: String) throws -> String? {
        guard let i = words.firstIndex(where: { $0.isOption && $0.text == name }) else { return nil }
        guard i + 1 < words.count, !words[i + 1].isOption else { throw UsageError("\(name) needs a value") }
        let value = words[i + 1].text
        words.removeSubrange(i...(i + 1))
        if words.contains(where: { $0.isOption && $0.text == name }) {
            throw UsageError("\(name) is given more than once")
        }
        return value
    }

    /// The whole number after the option `name` (nil when absent), at least `minimum`.
    mutating func number<T: FixedWidthInteger>(_ name: String, as type: T.Type, minimum: T = 0) throws -> T? {
        guard let text = try value(name) else { return nil }
        guard let n = T(text), n >= minimum else {
            throw UsageError("\(name) takes a whole number of at least \(minimum), not '\(text)'")
        }
        return n
    }

    /// The next positional argument; `label` names it in the error when it is missing.
    mutating func positional(_ label: String) throws -> String {
        guard let word = optionalPositional() else { throw UsageError("missing \(label)") }
        return word
    }

    /// The next positional argument, if there is one.
    mutating func optionalPositional() -> String? {
        guard let i = words.firstIndex(where: { !$0.isOption }) else { return nil }
        return words.remove(at: i).text
    }

    /// Refuses whatever no one consumed: an unknown option, or an extra argument.
    func finish() throws {
        if let option = words.first(where: \.isOption) { throw UsageError("unknown option '\(option.text)'") }
        if let extra = words.first { throw UsageError("unexpected argument '\(extra.text)'") }
    }
}

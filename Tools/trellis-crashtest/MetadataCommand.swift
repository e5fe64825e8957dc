import Foundation
import Trellis

/// Open metadata with typed values, indexed and not, required and optional, for the round-trip tests.
final class Described: Model {
    @Attribute var number = 0
    @Attribute(.indexed) var info: [String: MetadataValue] = [:]
    @Attribute var maybeInfo: [String: MetadataValue]?
}

enum MetadataCommand {
    /// Item `n`'s metadata as round `round` leaves it: every kind of value (null, both Booleans, ints at the ends of
    /// `Int64`, doubles such as -0.0, 1e300 and the smallest subnormal, strings empty and outside ASCII), keys that
    /// come and go, an empty dictionary and a nil one, varying with `n` and the round.
    static func values(_ n: Int, round: Int) -> (info: [String: MetadataValue], maybeInfo: [String: MetadataValue]?) {
        let v = n * 7 + round
        var info: [String: MetadataValue] = [:]
        if n % 6 != 0 {
            info["rating"] = v % 5 == 0 ? MetadataValue.double(Double(v % 7) + 0.5) : MetadataValue.int(Int64(v % 7))
            info["color"] = .string(["red", "blue", "", "grün"][v % 4])
            if v % 3 == 0 { info["note"] = .null }
            if v % 2 == 0 { info["sale"] = .bool(v % 4 == 0) }
            // Kinds that depend on the item only, so that the last round's items hold each of them.
            let doubles: [Double] = [-0.0, 1e300, .leastNonzeroMagnitude, -2.25]
            if n % 2 == 1 { info["weight"] = .double(doubles[(n / 2) % 4]) }
            if n % 3 == 2 { info["big"] = MetadataValue.int(n % 2 == 0 ? .max : .min) }
            // A key whose value changes kind from round to round.
            let kinds: [MetadataValue] = [.int(Int64(v)), .string("\(v)"), .bool(true), .null, .double(Double(v) / 4)]
            info["mixed"] = kinds[v % 5]
        }
        let maybe: [String: MetadataValue]? =
            n % 3 == 0
            ? nil : (n % 3 == 1 ? [:] : ["k": .string("é\(v)"), "n": v % 2 == 0 ? MetadataValue.null : .int(-1)])
        return (info, maybe)
    }

    /// What round `rounds` leaves: items 1…rounds, each written again by every later round.
    static func expected(
        after rounds: Int
    ) -> [(number: Int, info: [String: MetadataValue], maybe: [String: MetadataValue]?)] {
        (0..<max(rounds, 0)).map { i in
            let v = values(i + 1, round: rounds)
            return (i + 1, v.info, v.maybeInfo)
        }
    }

    /// A dictionary as text, keys ascending, each value with its kind (`.int(3)` and `.double(3.0)` are told apart,
    /// and -0.0 from 0.0, so the line proves the value came back as written).
    static func text(_ d: [String: MetadataValue]?) -> String {
        guard let d else { return "nil" }
        return "["
            + d.keys.sorted().map { key in
                let value: String
                switch d[key]! {
                case .null: value = "null"
                case .bool(let b): value = "bool(\(b))"
                case .int(let i): value = "int(\(i))"
                case .double(let x): value = "double(\(x), \(String(x.bitPattern, radix: 16)))"
                case .string(let s): value = "string(\(s.debugDescription))"
                }
                return "\(key.debugDescription): \(value)"
            }.joined(separator: ", ") + "]"
    }

    /// An item as one line, the form the tests compare.
    static func line(_ number: Int, _ info: [String: MetadataValue], _ maybe: [String: MetadataValue]?) -> String {
        "described \(number) \(text(info)) \(text(maybe))"
    }

    /// The queries a round answers after printing the items, and what they select among `items`, computed here with
    /// Swift's own operators on the values.
    static func queryLines(
        _ items: [(number: Int, info: [String: MetadataValue], maybe: [String: MetadataValue]?)]
    ) -> [String] {
        func numbers(_ test: ([String: MetadataValue]) -> Bool) -> String {
            "\(items.filter { test($0.info) }.map(\.number))"
        }
        return [
            "rating > 3: " + numbers { $0["rating", default: .null] > 3 },
            "rating <= 2.5: " + numbers { $0["rating", default: .null] <= 2.5 },
            "color == red: " + numbers { $0["color"] == .string("red") },
            "color >= \"b\": " + numbers { $0["color", default: .null] >= "b" },
            "note is null: " + numbers { $0["note"] == .null },
            "note missing: " + numbers { $0["note"] == nil },
            "sale: " + numbers { $0["sale"] == .bool(true) },
            "mixed > 10: " + numbers { $0["mixed", default: .null] > 10 },
            "has weight: " + numbers { $0["weight"] != nil },
        ]
    }

    /// Round `round`: opens the store in `directory` (creating it), inserts item `round`, rewrites every earlier
    /// item's metadata in a second save, compacts (a checkpoint) on every third round, then prints every item by
    /// number, the answers of key queries (through the index on `info`), and `closed N`.
    static func run(directory: URL, round: Int) throws {
        let store = try Store(directory: directory, models: [Described.self])
        let context = ModelContext(store)
        if round > 0 {
            let item = Described()
            item.number = round
            (item.info, item.maybeInfo) = values(round, round: round)
            context.insert(item)
            try context.save()
            for earlier in try context.fetch(FetchDescriptor<Described>(predicate: #Predicate { $0.number < round })) {
                (earlier.info, earlier.maybeInfo) = values(earlier.number, round: round)
            }
            try context.save()
            if round % 3 == 0 { try store.compact() }
        }
        let byNumber = [SortDescriptor(\Described.number)]
        for item in try context.fetch(FetchDescriptor<Described>(sortBy: byNumber)) {
            say(line(item.number, item.info, item.maybeInfo))
        }
        func numbers(_ predicate: Predicate<Described>) throws -> String {
            "\(try context.fetch(FetchDescriptor(predicate: predicate, sortBy: byNumber)).map(\.number))"
        }
        let none = MetadataValue.null
        say("rating > 3: " + (try numbers(#Predicate { $0.info["rating", default: none] > 3 })))
        say("rating <= 2.5: " + (try numbers(#Predicate { $0.info["rating"].flatMap { $0 <= 2.5 } == true })))
        say("color == red: " + (try numbers(#Predicate { $0.info["color"] == "red" })))
        say("color >= \"b\": " + (try numbers(#Predicate { $0.info["color", default: none] >= "b" })))
        say("note is null: " + (try numbers(#Predicate { $0.info["note"] == none })))
        say("note missing: " + (try numbers(#Predicate { $0.info["note"] == nil })))
        say("sale: " + (try numbers(#Predicate { $0.info["sale"] == true })))
        say("mixed > 10: " + (try numbers(#Predicate { if let m = $0.info["mixed"] { m > 10 } else { false } })))
        say("has weight: " + (try numbers(#Predicate { $0.info["weight"] != nil })))
        try store.close()
        say("closed \(store.snapshot.sequence)")
    }
}

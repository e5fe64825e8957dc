import Foundation
import Trellis

/// Every collection attribute type, required and optional, two of them indexed, for the round-trip tests.
final class Tagged: Model {
    @Attribute var number = 0
    @Attribute(.indexed) var tags: [String] = []
    @Attribute var codes: [Int] = []
    @Attribute(.indexed) var labels: Set<String> = []
    @Attribute var maybeTags: [String]?
    @Attribute var maybeCodes: [Int]?
    @Attribute var maybeLabels: Set<String>?
    @Attribute(.indexed) var metadata: [String: String] = [:]
    @Attribute var maybeMetadata: [String: String]?
}

/// The collections of one `Tagged` object, as plain values.
struct TaggedValues: Equatable {
    var tags: [String]
    var codes: [Int]
    var labels: Set<String>
    var maybeTags: [String]?
    var maybeCodes: [Int]?
    var maybeLabels: Set<String>?
    var metadata: [String: String]
    var maybeMetadata: [String: String]?
}

enum TagsCommand {
    /// Item `n`'s collections as round `round` leaves them: empty ones, nil ones, repeats, text outside ASCII and
    /// negative numbers, varying with `n` and the round.
    static func values(_ n: Int, round: Int) -> TaggedValues {
        let v = n * 5 + round
        let tags = (0..<(v % 4)).map { "t\(($0 + v) % 6)" } + (n % 2 == 0 ? ["t\(v % 6)", "été"] : [])
        let codes = n % 3 == 0 ? [] : [v, -v, v, Int.max - v, Int.min + v]
        let labels = Set((0..<(v % 3)).map { "l\(($0 * 7 + v) % 5)" })
        return TaggedValues(
            tags: tags, codes: codes, labels: labels,
            maybeTags: n % 3 == 1 ? nil : (n % 3 == 2 ? [] : ["m\(v)", ""]),
            maybeCodes: n % 2 == 0 ? nil : [round],
            maybeLabels: n % 4 == 0 ? nil : Set(n % 4 == 1 ? [] : ["x\(v % 3)", "y"]),
            metadata: n % 5 == 0 ? [:] : ["color": "c\(v % 3)", "owner": "ö\(n)", "": v % 2 == 0 ? "" : "odd"],
            maybeMetadata: n % 2 == 1 ? nil : (n % 4 == 0 ? [:] : ["k": "\(v)"]))
    }

    /// What round `rounds` leaves: items 1…rounds, each written again by every later round.
    static func expected(after rounds: Int) -> [(number: Int, values: TaggedValues)] {
        (0..<max(rounds, 0)).map { i in (i + 1, values(i + 1, round: rounds)) }
    }

    /// An item as one line: `tagged <number> <tags> <codes> <labels, ascending> …`, the form the tests compare.
    static func line(_ number: Int, _ v: TaggedValues) -> String {
        func set(_ s: Set<String>?) -> String { s.map { "\($0.sorted())" } ?? "nil" }
        func optional<T>(_ x: T?) -> String { x.map { "\($0)" } ?? "nil" }
        func pairs(_ d: [String: String]?) -> String {
            d.map { "\($0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })" } ?? "nil"
        }
        return "tagged \(number) \(v.tags) \(v.codes) \(set(v.labels)) \(optional(v.maybeTags)) "
            + "\(optional(v.maybeCodes)) \(set(v.maybeLabels)) \(pairs(v.metadata)) \(pairs(v.maybeMetadata))"
    }

    /// The numbers of the items whose `tags` hold `element`, and those whose `labels` hold `label`: the lines a round
    /// prints after the items, answered by the element indexes.
    static func queryLines(_ items: [(number: Int, values: TaggedValues)]) -> [String] {
        (0..<6).map { k in
            "tags contains t\(k): \(items.filter { $0.values.tags.contains("t\(k)") }.map(\.number))"
        }
            + (0..<5).map { k in
                "labels contains l\(k): \(items.filter { $0.values.labels.contains("l\(k)") }.map(\.number))"
            }
            + ["tags empty: \(items.filter { $0.values.tags.isEmpty }.map(\.number))"]
            + (0..<3).map { k in
                "color c\(k): \(items.filter { $0.values.metadata["color"] == "c\(k)" }.map(\.number))"
            }
            + ["has owner: \(items.filter { $0.values.metadata["owner"] != nil }.map(\.number))"]
    }

    /// Round `round`: opens the store in `directory` (creating it), inserts item `round`, rewrites every earlier item's
    /// collections in a second save, compacts (a checkpoint) on every third round, then prints every item by number,
    /// the answers of `contains` and `isEmpty` queries, and `closed N`.
    static func run(directory: URL, round: Int) throws {
        let store = try Store(directory: directory, models: [Tagged.self])
        let context = ModelContext(store)
        func assign(_ item: Tagged, _ v: TaggedValues) {
            item.tags = v.tags
            item.codes = v.codes
            item.labels = v.labels
            item.maybeTags = v.maybeTags
            item.maybeCodes = v.maybeCodes
            item.maybeLabels = v.maybeLabels
            item.metadata = v.metadata
            item.maybeMetadata = v.maybeMetadata
        }
        if round > 0 {
            let item = Tagged()
            item.number = round
            assign(item, values(round, round: round))
            context.insert(item)
            try context.save()
            for earlier in try context.fetch(FetchDescriptor<Tagged>(predicate: #Predicate { $0.number < round })) {
                assign(earlier, values(earlier.number, round: round))
            }
            try context.save()
            if round % 3 == 0 { try store.compact() }
        }
        let items = try context.fetch(FetchDescriptor<Tagged>(sortBy: [SortDescriptor(\.number)]))
        for item in items {
            say(
                line(
                    item.number,
                    TaggedValues(
                        tags: item.tags, codes: item.codes, labels: item.labels, maybeTags: item.maybeTags,
                        maybeCodes: item.maybeCodes, maybeLabels: item.maybeLabels, metadata: item.metadata,
                        maybeMetadata: item.maybeMetadata)))
        }
        let byNumber = [SortDescriptor(\Tagged.number)]
        for k in 0..<6 {
            let element = "t\(k)"
            let found = try context.fetch(
                FetchDescriptor<Tagged>(predicate: #Predicate { $0.tags.contains(element) }, sortBy: byNumber))
            say("tags contains \(element): \(found.map(\.number))")
        }
        for k in 0..<5 {
            let label = "l\(k)"
            let found = try context.fetch(
                FetchDescriptor<Tagged>(predicate: #Predicate { $0.labels.contains(label) }, sortBy: byNumber))
            say("labels contains \(label): \(found.map(\.number))")
        }
        let empty = try context.fetch(
            FetchDescriptor<Tagged>(predicate: #Predicate { $0.tags.isEmpty }, sortBy: byNumber))
        say("tags empty: \(empty.map(\.number))")
        for k in 0..<3 {
            let color = "c\(k)"
            let found = try context.fetch(
                FetchDescriptor<Tagged>(predicate: #Predicate { $0.metadata["color"] == color }, sortBy: byNumber))
            say("color \(color): \(found.map(\.number))")
        }
        let owned = try context.fetch(
            FetchDescriptor<Tagged>(predicate: #Predicate { $0.metadata["owner"] != nil }, sortBy: byNumber))
        say("has owner: \(owned.map(\.number))")
        try store.close()
        say("closed \(store.snapshot.sequence)")
    }
}

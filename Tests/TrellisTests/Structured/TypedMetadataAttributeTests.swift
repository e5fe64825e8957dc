import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Issue 19, open metadata with typed values: a `[String: MetadataValue]` attribute whose keys predicates read
/// (`$0.info["color"] == .string("red")`, `$0.info["rating", default: .null] > 3`), indexed by key and value, against
/// Foundation's brute force over 10,000 objects, before and after updates and deletes; `explain` shows the pairs
/// index; every kind of value round-trips through save, journal, checkpoint and reopen in other processes.
@Suite struct TypedMetadataAttributeTests {
    final class Thing: Model {
        @Attribute(.indexed) var info: [String: MetadataValue] = [:]
        @Attribute var extra: [String: MetadataValue]?
        @Attribute var n = 0
    }

    struct PlainThing {
        var id = ObjectID(entity: 0, serial: 0)
        var info: [String: MetadataValue] = [:]
        var extra: [String: MetadataValue]?
        var n = 0

        static let keys = ["color", "rating", "sale", "note", "é"]

        /// A value of any kind, from a small domain so that predicates hit: null, Booleans, small ints, doubles
        /// (some equal to ints, -0.0 among them) and short strings.
        static func randomValue(_ rng: inout SeededRandom) -> MetadataValue {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0: return .null
            case 1: return .bool(Bool.random(using: &rng))
            case 2, 3, 4: return .int(Int64.random(in: -1..<6, using: &rng))
            case 5, 6: return .double([-0.0, 0.5, 1, 2.5, 3, 4.5, -1.5].randomElement(using: &rng)!)
            default: return .string(["", "a", "b", "red", "blue", "é"].randomElement(using: &rng)!)
            }
        }

        static func random(_ rng: inout SeededRandom) -> PlainThing {
            var p = PlainThing()
            for key in keys where Int.random(in: 0..<3, using: &rng) > 0 { p.info[key] = randomValue(&rng) }
            if Bool.random(using: &rng) {
                p.extra = Int.random(in: 0..<4, using: &rng) == 0 ? [:] : ["k": randomValue(&rng)]
            }
            p.n = Int.random(in: 0..<100, using: &rng)
            return p
        }
    }

    struct Paths<Root>: Sendable {
        typealias Path<V> = any KeyPath<Root, V> & Sendable
        var info: Path<[String: MetadataValue]>
        var extra: Path<[String: MetadataValue]?>
        var n: Path<Int>
    }

    static let modelPaths = Paths<Thing>(info: \.info, extra: \.extra, n: \.n)
    static let plainPaths = Paths<PlainThing>(info: \.info, extra: \.extra, n: \.n)

    enum Op: CaseIterable {
        case eq, ne, lt, le, gt, ge
    }

    indirect enum Term: CustomStringConvertible {
        /// `info[key] == value` (nil: the key is absent)
        case equals(String, MetadataValue?)
        /// `info[key] != nil`
        case has(String)
        /// `info[key, default: .null] op value`
        case compare(String, Op, MetadataValue)
        /// `(info[key] ?? fallback) op value`
        case coalesced(String, MetadataValue, Op, MetadataValue)
        /// `extra?[key] == value` through an optional dictionary: `extra.flatMap { $0[key] } == value`
        case extraEquals(MetadataValue)
        case empty
        case nLess(Int)
        case and(Term, Term)
        case or(Term, Term)
        case not(Term)

        var description: String {
            switch self {
            case .equals(let k, let v): return "info[\(k)] == \(v.map(\.description) ?? "nil")"
            case .has(let k): return "info[\(k)] != nil"
            case .compare(let k, let op, let v): return "info[\(k), default: .null] \(op) \(v)"
            case .coalesced(let k, let f, let op, let v): return "(info[\(k)] ?? \(f)) \(op) \(v)"
            case .extraEquals(let v): return "extra?[k] == \(v)"
            case .empty: return "info empty"
            case .nLess(let v): return "n < \(v)"
            case .and(let l, let r): return "(\(l) && \(r))"
            case .or(let l, let r): return "(\(l) || \(r))"
            case .not(let e): return "!(\(e))"
            }
        }

        static func random(depth: Int, _ rng: inout SeededRandom) -> Term {
            if depth > 0 && Int.random(in: 0..<3, using: &rng) > 0 {
                switch Int.random(in: 0..<5, using: &rng) {
                case 0, 1: return .and(random(depth: depth - 1, &rng), random(depth: depth - 1, &rng))
                case 2, 3: return .or(random(depth: depth - 1, &rng), random(depth: depth - 1, &rng))
                default: return .not(random(depth: depth - 1, &rng))
                }
            }
            let key = (PlainThing.keys + ["missing"]).randomElement(using: &rng)!
            let op = Op.allCases.randomElement(using: &rng)!
            switch Int.random(in: 0..<12, using: &rng) {
            case 0, 1, 2: return .equals(key, PlainThing.randomValue(&rng))
            case 3: return .equals(key, nil)
            case 4: return .has(key)
            case 5, 6, 7: return .compare(key, op, PlainThing.randomValue(&rng))
            case 8: return .coalesced(key, PlainThing.randomValue(&rng), op, PlainThing.randomValue(&rng))
            case 9: return .extraEquals(PlainThing.randomValue(&rng))
            case 10: return .empty
            default: return .nLess(Int.random(in: 0...100, using: &rng))
            }
        }

        func predicate<Root>(_ paths: Paths<Root>) -> Predicate<Root> {
            Predicate<Root> { root in build(root, paths) }
        }

        private func build<Root>(_ root: PredicateExpressions.Variable<Root>, _ p: Paths<Root>) -> BoolExpression {
            let info = PredicateExpressions.KeyPath(root: root, keyPath: p.info)
            func read(
                _ key: String
            )
                -> PredicateExpressions.DictionaryKeySubscript<
                    PredicateExpressions.KeyPath<PredicateExpressions.Variable<Root>, [String: MetadataValue]>,
                    PredicateExpressions.Value<String>, MetadataValue
                >
            { PredicateExpressions.DictionaryKeySubscript(wrapped: info, key: PredicateExpressions.Value(key)) }
            switch self {
            case .equals(let k, let v):
                return PredicateExpressions.Equal(lhs: read(k), rhs: PredicateExpressions.Value(v))
            case .has(let k):
                return PredicateExpressions.NotEqual(
                    lhs: read(k), rhs: PredicateExpressions.NilLiteral<MetadataValue>())
            case .compare(let k, let op, let v):
                let lhs = PredicateExpressions.DictionaryKeyDefaultValueSubscript(
                    wrapped: info, key: PredicateExpressions.Value(k),
                    default: PredicateExpressions.Value(MetadataValue.null))
                return Self.compare(lhs, op, PredicateExpressions.Value(v))
            case .coalesced(let k, let f, let op, let v):
                let lhs = PredicateExpressions.NilCoalesce(lhs: read(k), rhs: PredicateExpressions.Value(f))
                return Self.compare(lhs, op, PredicateExpressions.Value(v))
            case .extraEquals(let v):
                let extra = PredicateExpressions.KeyPath(root: root, keyPath: p.extra)
                let value = PredicateExpressions.OptionalFlatMap(extra) { variable in
                    PredicateExpressions.DictionaryKeySubscript(wrapped: variable, key: PredicateExpressions.Value("k"))
                }
                return PredicateExpressions.Equal(lhs: value, rhs: PredicateExpressions.Value(Optional(v)))
            case .empty:
                return PredicateExpressions.KeyPath(root: info, keyPath: \[String: MetadataValue].isEmpty)
            case .nLess(let v):
                return PredicateExpressions.Comparison(
                    lhs: PredicateExpressions.KeyPath(root: root, keyPath: p.n), rhs: PredicateExpressions.Value(v),
                    op: .lessThan)
            case .and(let l, let r): return conjunction(l.build(root, p), r.build(root, p))
            case .or(let l, let r): return disjunction(l.build(root, p), r.build(root, p))
            case .not(let e): return negation(e.build(root, p))
            }
        }

        private static func compare<L: StandardPredicateExpression, R: StandardPredicateExpression>(
            _ lhs: L, _ op: Op, _ rhs: R
        ) -> BoolExpression where L.Output == R.Output, L.Output: Comparable & Codable & Sendable {
            switch op {
            case .eq: return PredicateExpressions.Equal(lhs: lhs, rhs: rhs)
            case .ne: return PredicateExpressions.NotEqual(lhs: lhs, rhs: rhs)
            case .lt: return PredicateExpressions.Comparison(lhs: lhs, rhs: rhs, op: .lessThan)
            case .le: return PredicateExpressions.Comparison(lhs: lhs, rhs: rhs, op: .lessThanOrEqual)
            case .gt: return PredicateExpressions.Comparison(lhs: lhs, rhs: rhs, op: .greaterThan)
            case .ge: return PredicateExpressions.Comparison(lhs: lhs, rhs: rhs, op: .greaterThanOrEqual)
            }
        }
    }

    /// Runs `count` random predicates; returns how many the pairs index answered, and how many of those by a range.
    static func check(
        _ reader: ModelContext, _ plain: [PlainThing], count: Int, _ rng: inout SeededRandom
    ) throws -> (indexed: Int, ranges: Int) {
        var (indexed, ranges) = (0, 0)
        for _ in 0..<count {
            let term = Term.random(depth: 2, &rng)
            let expected = try plain.filter { try term.predicate(plainPaths).evaluate($0) }.map(\.id)
            let descriptor = FetchDescriptor<Thing>(predicate: term.predicate(modelPaths))
            #expect(try reader.fetchIdentifiers(descriptor) == expected, "\(term)")
            let plan = try reader.explain(descriptor)
            #expect(!plan.evaluatesOnObjects, "\(term) compiles: \(plan)")
            if plan.index == ["info"] {
                indexed += 1
                if plan.access == .indexRange { ranges += 1 }
            }
        }
        return (indexed, ranges)
    }

    @Test func randomTypedMetadataPredicatesMatchBruteForceOverTenThousandObjects() throws {
        var rng = SeededRandom(seed: 1_919_090)
        let store = try Store(models: [Thing.self])
        let context = ModelContext(store)
        var plain: [PlainThing] = []
        var things: [Thing] = []
        for _ in 0..<10_000 {
            let p = PlainThing.random(&rng)
            let thing = Thing()
            thing.info = p.info
            thing.extra = p.extra
            thing.n = p.n
            context.insert(thing)
            plain.append(p)
            things.append(thing)
        }
        try context.save()
        for i in plain.indices { plain[i].id = things[i].objectID! }
        let first = try Self.check(ModelContext(store), plain, count: 250, &rng)
        #expect(first.indexed > 30, "the pairs index answered only \(first.indexed) of 250 predicates")
        #expect(first.ranges > 10, "the pairs index answered only \(first.ranges) of 250 predicates by a range")

        for _ in 0..<2_000 {
            let i = Int.random(in: 0..<plain.count, using: &rng)
            var p = PlainThing.random(&rng)
            p.id = plain[i].id
            plain[i] = p
            things[i].info = p.info
            things[i].extra = p.extra
            things[i].n = p.n
        }
        try context.save()
        for _ in 0..<300 {
            let i = Int.random(in: 0..<plain.count, using: &rng)
            context.delete(things.remove(at: i))
            plain.remove(at: i)
        }
        try context.save()
        #expect(store.snapshot.invariantViolations() == [])
        let second = try Self.check(ModelContext(store), plain, count: 120, &rng)
        #expect(second.indexed > 15, "after changes, the pairs index answered \(second.indexed) of 120")
    }

    @Test func explainShowsTheIndexForKeyEqualityNullsAndNumberRanges() throws {
        let store = try Store(models: [Thing.self])
        let context = ModelContext(store)
        for i in 0..<300 {
            let thing = Thing()
            switch i % 30 {
            case 0: thing.info = ["color": "red", "rating": .int(Int64(i / 30)), "note": .null]
            case 1: thing.info = ["color": "blue", "rating": .double(Double(i / 30) + 0.5)]
            case 2: thing.info = ["rating": "high"]
            default: thing.info = ["color": "green"]
            }
            thing.n = i
            context.insert(thing)
        }
        try context.save()
        // In `#Predicate`, metadata values are literals ("red", 3, 2.5, true) or values named outside the closure.
        let none = MetadataValue.null
        let red = FetchDescriptor<Thing>(predicate: #Predicate { $0.info["color"] == "red" })
        let plan = try context.explain(red)
        #expect(plan.access == .indexEquality && plan.index == ["info"], "\(plan)")
        #expect(plan.bounds == ["info[\"color\"] = \"red\""] && plan.candidates == 10 && !plan.filters, "\(plan)")
        #expect(try context.fetch(red).map(\.n) == stride(from: 0, to: 300, by: 30).map { $0 })

        // Numbers above 3, ints and doubles alike; the string "high" is not a number, so not above 3.
        let rated = FetchDescriptor<Thing>(
            predicate: #Predicate { $0.info["rating", default: none] > 3 }, sortBy: [SortDescriptor(\.n)])
        let ratedPlan = try context.explain(rated)
        #expect(ratedPlan.access == .indexRange && ratedPlan.index == ["info"], "\(ratedPlan)")
        #expect(ratedPlan.bounds == ["info[\"rating\"] > 3"] && ratedPlan.candidates == 13, "\(ratedPlan)")
        #expect(
            try context.fetch(rated).map(\.n) == [91, 120, 121, 150, 151, 180, 181, 210, 211, 240, 241, 270, 271])

        let noted = FetchDescriptor<Thing>(predicate: #Predicate { $0.info["note"] == none })
        let notedPlan = try context.explain(noted)
        #expect(notedPlan.index == ["info"] && notedPlan.bounds == ["info[\"note\"] = null"], "\(notedPlan)")
        #expect(try context.fetchCount(noted) == 10)
        #expect(try context.fetchCount(FetchDescriptor<Thing>(predicate: #Predicate { $0.info["note"] == nil })) == 290)
        let text = FetchDescriptor<Thing>(predicate: #Predicate { $0.info["rating"].flatMap { $0 >= "a" } == true })
        #expect(try context.fetchCount(text) == 10 && (try context.explain(text)).access == .indexRange)

        let snapshot = store.snapshot
        let query = DynamicQuery("Thing", where: .keyValue("info", key: "rating", .greater, 3))
        #expect(try snapshot.count(query) == 13)
        #expect(try snapshot.explain(query).index == ["info"])
        #expect(try snapshot.count(DynamicQuery("Thing", where: .keyValue("info", key: "note", .equal, .null))) == 10)
        #expect(try snapshot.count(DynamicQuery("Thing", where: .entry("info", key: "color", "red"))) == 10)
        #expect(try snapshot.count(DynamicQuery("Thing", where: .entry("info", key: "rating", 0))) == 1)
        #expect(throws: TrellisError.self) {
            try snapshot.count(DynamicQuery("Thing", where: .keyValue("n", key: "x", .equal, "y")))
        }
    }

    @Test func valuesAreStoredByKeyWithTheirKinds() throws {
        let info: [String: MetadataValue] = ["b": 2, "a": "x", "c": .null, "d": 1.5, "e": true]
        #expect(info.persistentValue == .list(["a", "x", "b", 2, "c", .null, "d", 1.5, "e", true]))
        #expect([String: MetadataValue](persistentValue: info.persistentValue) == info)
        #expect(AttributeType.metadataDictionary.normalized(.list(["b", 1, "a", 2])) == nil, "keys ascend")
        #expect(AttributeType.metadataDictionary.normalized(.list(["a", .date(Date())])) == nil, "scalars only")
        #expect(AttributeType.metadataDictionary.normalized(.list(["a", .null, "b", "s"])) != nil)
        #expect(
            AttributeType.stringDictionary.normalized(.list(["a", .null])) == nil, "[String: String] holds no null")
        // Numbers equal across kinds; ordering only within a kind.
        #expect(
            MetadataValue.int(3) == .double(3) && MetadataValue.int(3).hashValue == MetadataValue.double(3).hashValue)
        #expect(MetadataValue.int(3) < .double(3.5) && !(MetadataValue.string("a") < .int(3)))
        #expect(!(MetadataValue.string("a") > .int(3)) && !(MetadataValue.string("a") >= .int(3)))
        #expect(!(MetadataValue.null <= .null) && MetadataValue.null == .null)
        // JSON: scalars as themselves.
        let json = try JSONEncoder().encode(["a": MetadataValue.null, "b": 4, "c": "x", "d": true])
        let back = try JSONDecoder().decode([String: MetadataValue].self, from: json)
        #expect(back == ["a": .null, "b": 4, "c": "x", "d": true])
    }

    /// Save, journal, checkpoint and reopen, each round in a new process (`trellis-crashtest metadata`): every kind
    /// of value (null, Booleans, ints at Int64's ends, doubles with -0.0 and a subnormal, strings), missing keys, empty
    /// and nil dictionaries come back as written, bit for bit, and the pairs index answers key queries in the child
    /// (after a checkpoint load, too) as Swift's operators do; the store reopens here with the same values.
    @Test func typedMetadataRoundTripsThroughJournalCheckpointAndOtherProcesses() throws {
        let temporary = TemporaryDirectory()
        let store = temporary.store
        for round in 1...7 {
            let child = try CrashChild.run(["metadata", "--dir", store.path, "--add", "\(round)"])
            #expect(child.exitStatus == 0 && !child.killed, "round \(round): \(child.lines.suffix(3))")
            let items = MetadataCommand.expected(after: round)
            let expected =
                items.map { MetadataCommand.line($0.number, $0.info, $0.maybe) }
                + MetadataCommand.queryLines(items)
            #expect(Array(child.lines.dropLast()) == expected, "round \(round)")
        }
        #expect(try JournalReader(directory: store).manifest().checkpointSequence > 0, "round 6 compacted")
        let opened = try Store(directory: store, models: [Described.self])
        let context = ModelContext(opened)
        let items = try context.fetch(FetchDescriptor<Described>(sortBy: [SortDescriptor(\.number)]))
        let expected = MetadataCommand.expected(after: 7)
        #expect(items.map(\.number) == expected.map(\.number))
        for (item, e) in zip(items, expected) {
            #expect(
                MetadataCommand.line(item.number, item.info, item.maybeInfo)
                    == MetadataCommand.line(e.number, e.info, e.maybe))
        }
        // Every kind was written.
        let all = expected.flatMap { $0.info.values }
        #expect(all.contains(.null) && all.contains(.bool(true)) && all.contains(.bool(false)))
        #expect(all.contains(.int(.max)) && all.contains(.int(.min)) && all.contains(.string("")))
        #expect(all.contains { if case .double(let d) = $0 { d.sign == .minus && d == 0 } else { false } })
        #expect(expected.contains { $0.info.isEmpty } && expected.contains { $0.maybe == nil })
        #expect(expected.contains { $0.maybe == [:] } && expected.contains { $0.info["note"] == nil })
        #expect(opened.snapshot.invariantViolations() == [])
        try opened.close()
        #expect(try JournalReader(directory: store).verify().problems == [])
    }

    enum NoteV1 {
        final class Note: Model {
            @Attribute var title = ""
        }
    }

    enum NoteV2 {
        final class Note: Model {
            @Attribute var title = ""
            @Attribute(.indexed) var info: [String: MetadataValue] = ["new": true]
            @Attribute var more: [String: MetadataValue]?
        }
    }

    /// Adding a metadata attribute is a lightweight migration: existing objects get the default (nil for an
    /// optional one), and its index answers at once; the store reopens after it.
    @Test func addingMetadataIsALightweightMigration() throws {
        let temporary = TemporaryDirectory()
        do {
            let store = try Store(directory: temporary.store, models: [NoteV1.Note.self])
            let context = ModelContext(store)
            for i in 0..<5 {
                let note = NoteV1.Note()
                note.title = "n\(i)"
                context.insert(note)
            }
            try context.save()
            try store.close()
        }
        let store = try Store(directory: temporary.store, models: [NoteV2.Note.self])
        let context = ModelContext(store)
        let notes = try context.fetch(FetchDescriptor<NoteV2.Note>(sortBy: [SortDescriptor(\.title)]))
        #expect(notes.map(\.info) == Array(repeating: ["new": true], count: 5))
        #expect(notes.allSatisfy { $0.more == nil })
        notes[0].info["rating"] = 5
        try context.save()
        let none = MetadataValue.null
        let rated = FetchDescriptor<NoteV2.Note>(predicate: #Predicate { $0.info["rating", default: none] >= 5 })
        #expect(try context.fetch(rated).map(\.title) == ["n0"])
        #expect(try context.explain(rated).index == ["info"])
        try store.close()
        let reopened = try Store(directory: temporary.store, models: [NoteV2.Note.self])
        #expect(try ModelContext(reopened).fetchCount(rated) == 1)
        try reopened.close()
    }
}

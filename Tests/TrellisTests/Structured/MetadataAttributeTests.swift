import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Issue 19, open metadata: a `[String: String]` attribute whose keys predicates read (`$0.metadata["color"] ==
/// "red"`), indexed by key and value, against Foundation's brute force over 10,000 objects, before and after
/// updates and deletes; `explain` shows the pairs index.
@Suite struct MetadataAttributeTests {
    final class Thing: Model {
        @Attribute(.indexed) var metadata: [String: String] = [:]
        @Attribute var extra: [String: String]?
        @Attribute var n = 0
    }

    struct PlainThing {
        var id = ObjectID(entity: 0, serial: 0)
        var metadata: [String: String] = [:]
        var extra: [String: String]?
        var n = 0

        static let keys = ["color", "size", "shape", "owner", "é"]

        static func random(_ rng: inout SeededRandom) -> PlainThing {
            var p = PlainThing()
            for key in keys where Int.random(in: 0..<3, using: &rng) > 0 {
                p.metadata[key] = "v\(Int.random(in: 0..<8, using: &rng))"
            }
            if Bool.random(using: &rng) {
                p.extra =
                    Int.random(in: 0..<4, using: &rng) == 0 ? [:] : ["k": "v\(Int.random(in: 0..<3, using: &rng))"]
            }
            p.n = Int.random(in: 0..<100, using: &rng)
            return p
        }
    }

    struct Paths<Root>: Sendable {
        typealias Path<V> = any KeyPath<Root, V> & Sendable
        var metadata: Path<[String: String]>
        var extra: Path<[String: String]?>
        var n: Path<Int>
    }

    static let modelPaths = Paths<Thing>(metadata: \.metadata, extra: \.extra, n: \.n)
    static let plainPaths = Paths<PlainThing>(metadata: \.metadata, extra: \.extra, n: \.n)

    indirect enum Term: CustomStringConvertible {
        /// `metadata[key] == value` (nil: the key is absent)
        case equals(String, String?)
        /// `metadata[key] != nil`
        case has(String)
        /// `metadata[key] < value`
        case less(String, String)
        case empty
        case nLess(Int)
        case and(Term, Term)
        case or(Term, Term)
        case not(Term)

        var description: String {
            switch self {
            case .equals(let k, let v): return "m[\(k)] == \(v ?? "nil")"
            case .has(let k): return "m[\(k)] != nil"
            case .less(let k, let v): return "m[\(k)] ?? \"\" < \(v)"
            case .empty: return "m empty"
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
            switch Int.random(in: 0..<10, using: &rng) {
            case 0, 1, 2, 3: return .equals(key, "v\(Int.random(in: 0..<9, using: &rng))")
            case 4: return .equals(key, nil)
            case 5: return .has(key)
            case 6: return .less(key, "v\(Int.random(in: 0..<9, using: &rng))")
            case 7: return .empty
            default: return .nLess(Int.random(in: 0...100, using: &rng))
            }
        }

        func predicate<Root>(_ paths: Paths<Root>) -> Predicate<Root> {
            Predicate<Root> { root in build(root, paths) }
        }

        private func build<Root>(_ root: PredicateExpressions.Variable<Root>, _ p: Paths<Root>) -> BoolExpression {
            let metadata = PredicateExpressions.KeyPath(root: root, keyPath: p.metadata)
            func read(
                _ key: String
            )
                -> PredicateExpressions.DictionaryKeySubscript<
                    PredicateExpressions.KeyPath<PredicateExpressions.Variable<Root>, [String: String]>,
                    PredicateExpressions.Value<String>, String
                >
            { PredicateExpressions.DictionaryKeySubscript(wrapped: metadata, key: PredicateExpressions.Value(key)) }
            switch self {
            case .equals(let k, let v):
                return PredicateExpressions.Equal(lhs: read(k), rhs: PredicateExpressions.Value(v))
            case .has(let k):
                return PredicateExpressions.NotEqual(lhs: read(k), rhs: PredicateExpressions.NilLiteral<String>())
            case .less(let k, let v):
                return PredicateExpressions.Comparison(
                    lhs: PredicateExpressions.NilCoalesce(lhs: read(k), rhs: PredicateExpressions.Value("")),
                    rhs: PredicateExpressions.Value(v), op: .lessThan)
            case .empty: return PredicateExpressions.KeyPath(root: metadata, keyPath: \[String: String].isEmpty)
            case .nLess(let v):
                return PredicateExpressions.Comparison(
                    lhs: PredicateExpressions.KeyPath(root: root, keyPath: p.n), rhs: PredicateExpressions.Value(v),
                    op: .lessThan)
            case .and(let l, let r): return conjunction(l.build(root, p), r.build(root, p))
            case .or(let l, let r): return disjunction(l.build(root, p), r.build(root, p))
            case .not(let e): return negation(e.build(root, p))
            }
        }

    }

    static func check(
        _ reader: ModelContext, _ plain: [PlainThing], count: Int, _ rng: inout SeededRandom
    ) throws -> Int {
        var indexed = 0
        for _ in 0..<count {
            let term = Term.random(depth: 2, &rng)
            let expected = try plain.filter { try term.predicate(plainPaths).evaluate($0) }.map(\.id)
            let descriptor = FetchDescriptor<Thing>(predicate: term.predicate(modelPaths))
            #expect(try reader.fetchIdentifiers(descriptor) == expected, "\(term)")
            let plan = try reader.explain(descriptor)
            #expect(!plan.evaluatesOnObjects, "\(term) compiles: \(plan)")
            if plan.index == ["metadata"] { indexed += 1 }
        }
        return indexed
    }

    @Test func randomMetadataPredicatesMatchBruteForceOverTenThousandObjects() throws {
        var rng = SeededRandom(seed: 1_919_020)
        let store = try Store(models: [Thing.self])
        let context = ModelContext(store)
        var plain: [PlainThing] = []
        var things: [Thing] = []
        for _ in 0..<10_000 {
            let p = PlainThing.random(&rng)
            let thing = Thing()
            thing.metadata = p.metadata
            thing.extra = p.extra
            thing.n = p.n
            context.insert(thing)
            plain.append(p)
            things.append(thing)
        }
        try context.save()
        for i in plain.indices { plain[i].id = things[i].objectID! }
        let first = try Self.check(ModelContext(store), plain, count: 200, &rng)
        #expect(first > 30, "the pairs index answered only \(first) of 200 predicates")

        for _ in 0..<2_000 {
            let i = Int.random(in: 0..<plain.count, using: &rng)
            var p = PlainThing.random(&rng)
            p.id = plain[i].id
            plain[i] = p
            things[i].metadata = p.metadata
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
        let second = try Self.check(ModelContext(store), plain, count: 100, &rng)
        #expect(second > 15, "after changes, the pairs index answered \(second) of 100")
    }

    @Test func explainShowsTheKeyAndValueProbe() throws {
        let store = try Store(models: [Thing.self])
        let context = ModelContext(store)
        for i in 0..<300 {
            let thing = Thing()
            thing.metadata = i % 30 == 0 ? ["color": "red", "size": "L"] : ["color": "blue"]
            thing.n = i
            context.insert(thing)
        }
        try context.save()
        let red = FetchDescriptor<Thing>(predicate: #Predicate { $0.metadata["color"] == "red" })
        let plan = try context.explain(red)
        #expect(plan.access == .indexEquality && plan.index == ["metadata"], "\(plan)")
        #expect(plan.bounds == ["metadata[\"color\"] = \"red\""] && plan.candidates == 10 && !plan.filters)
        #expect(try context.fetch(red).map(\.n) == stride(from: 0, to: 300, by: 30).map { $0 })
        let sized = FetchDescriptor<Thing>(predicate: #Predicate { $0.metadata["size"] != nil && $0.n > 100 })
        let sizedPlan = try context.explain(sized)
        #expect(sizedPlan.bounds == ["metadata[\"size\"] != null"] && sizedPlan.candidates == 10, "\(sizedPlan)")
        #expect(try context.fetchCount(sized) == 6)
        let snapshot = store.snapshot
        let query = DynamicQuery("Thing", where: .entry("metadata", key: "color", "red"))
        #expect(try snapshot.count(query) == 10)
        #expect(try snapshot.explain(query).index == ["metadata"])
        #expect(try snapshot.count(DynamicQuery("Thing", where: .entry("metadata", key: "size", .null))) == 10)
        #expect(throws: TrellisError.self) {
            try snapshot.count(DynamicQuery("Thing", where: .entry("n", key: "x", "y")))
        }
    }

    @Test func valuesAreStoredByKey() {
        #expect(["b": "2", "a": "1"].persistentValue == .list(["a", "1", "b", "2"]))
        #expect([String: String](persistentValue: .list(["a", "1", "b", "2"])) == ["a": "1", "b": "2"])
        #expect([String: String](persistentValue: .list(["a"])) == nil)
        #expect(AttributeType.stringDictionary.normalized(.list(["b", "1", "a", "2"])) == nil)
        #expect(AttributeType.stringDictionary.normalized(.list(["a", "1", "a", "2"])) == nil)
        #expect(AttributeType.stringDictionary.normalized(.list(["a", "1", "b", "1"])) == .list(["a", "1", "b", "1"]))
    }
}

import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Issue 19, must-show 1 for collections: random predicates of `contains`, `isEmpty` and their negations over
/// `[String]`, `[Int]`, `Set<String>` and an optional `[String]`, mixed with an indexed integer, against Foundation's
/// brute force over 10,000 plain values; before and after a round of updates and deletes, which the element indexes
/// follow. The planner answers `contains` from the element indexes, and `explain` says so.
@Suite struct CollectionRandomPredicateTests {
    final class Bag: Model {
        @Attribute(.indexed) var tags: [String] = []
        @Attribute(.indexed) var codes: [Int] = []
        @Attribute(.indexed) var labels: Set<String> = []
        @Attribute var maybe: [String]?
        @Attribute(.indexed) var n = 0
    }

    struct PlainBag {
        var id = ObjectID(entity: 0, serial: 0)
        var tags: [String] = []
        var codes: [Int] = []
        var labels: Set<String> = []
        var maybe: [String]?
        var n = 0

        static func random(_ rng: inout SeededRandom) -> PlainBag {
            var p = PlainBag()
            p.tags = (0..<Int.random(in: 0...5, using: &rng)).map { _ in "t\(Int.random(in: 0..<30, using: &rng))" }
            p.codes = (0..<Int.random(in: 0...4, using: &rng)).map { _ in Int.random(in: -5..<45, using: &rng) }
            p.labels = Set(
                (0..<Int.random(in: 0...4, using: &rng)).map { _ in "l\(Int.random(in: 0..<20, using: &rng))" })
            if Int.random(in: 0..<10, using: &rng) >= 3 {
                p.maybe = (0..<Int.random(in: 0...3, using: &rng)).map { _ in "t\(Int.random(in: 0..<30, using: &rng))"
                }
            }
            p.n = Int.random(in: 0..<100, using: &rng)
            return p
        }
    }

    /// The key paths one root type offers to the builder.
    struct Paths<Root>: Sendable {
        typealias Path<V> = any KeyPath<Root, V> & Sendable
        var tags: Path<[String]>
        var codes: Path<[Int]>
        var labels: Path<Set<String>>
        var maybe: Path<[String]?>
        var n: Path<Int>
    }

    static let modelPaths = Paths<Bag>(tags: \.tags, codes: \.codes, labels: \.labels, maybe: \.maybe, n: \.n)
    static let plainPaths = Paths<PlainBag>(tags: \.tags, codes: \.codes, labels: \.labels, maybe: \.maybe, n: \.n)

    indirect enum Term: CustomStringConvertible {
        case tagsContain(String)
        case codesContain(Int)
        case labelsContain(String)
        /// `maybe?.contains(x) ?? false`
        case maybeContains(String)
        case tagsEmpty, codesEmpty, labelsEmpty
        case maybeNil
        case nLess(Int)
        case and(Term, Term)
        case or(Term, Term)
        case not(Term)

        var description: String {
            switch self {
            case .tagsContain(let x): return "tags ∋ \(x)"
            case .codesContain(let x): return "codes ∋ \(x)"
            case .labelsContain(let x): return "labels ∋ \(x)"
            case .maybeContains(let x): return "maybe ∋ \(x)"
            case .tagsEmpty: return "tags empty"
            case .codesEmpty: return "codes empty"
            case .labelsEmpty: return "labels empty"
            case .maybeNil: return "maybe nil"
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
            switch Int.random(in: 0..<12, using: &rng) {
            case 0, 1: return .tagsContain("t\(Int.random(in: 0..<32, using: &rng))")
            case 2, 3: return .codesContain(Int.random(in: -6..<46, using: &rng))
            case 4, 5: return .labelsContain("l\(Int.random(in: 0..<22, using: &rng))")
            case 6: return .maybeContains("t\(Int.random(in: 0..<30, using: &rng))")
            case 7: return [.tagsEmpty, .codesEmpty, .labelsEmpty].randomElement(using: &rng)!
            case 8: return .maybeNil
            default: return .nLess(Int.random(in: 0...100, using: &rng))
            }
        }

        func predicate<Root>(_ paths: Paths<Root>) -> Predicate<Root> {
            Predicate<Root> { root in build(root, paths) }
        }

        private func build<Root>(_ root: PredicateExpressions.Variable<Root>, _ p: Paths<Root>) -> BoolExpression {
            func key<V>(
                _ path: any KeyPath<Root, V> & Sendable
            )
                -> PredicateExpressions.KeyPath<PredicateExpressions.Variable<Root>, V>
            { PredicateExpressions.KeyPath(root: root, keyPath: path) }
            switch self {
            case .tagsContain(let x):
                return PredicateExpressions.SequenceContains(
                    sequence: key(p.tags), element: PredicateExpressions.Value(x))
            case .codesContain(let x):
                return PredicateExpressions.SequenceContains(
                    sequence: key(p.codes), element: PredicateExpressions.Value(x))
            case .labelsContain(let x):
                return PredicateExpressions.SequenceContains(
                    sequence: key(p.labels), element: PredicateExpressions.Value(x))
            case .maybeContains(let x):
                return PredicateExpressions.NilCoalesce(
                    lhs: PredicateExpressions.OptionalFlatMap(key(p.maybe)) { tags in
                        PredicateExpressions.SequenceContains(sequence: tags, element: PredicateExpressions.Value(x))
                    },
                    rhs: PredicateExpressions.Value(false))
            case .tagsEmpty: return PredicateExpressions.KeyPath(root: key(p.tags), keyPath: \[String].isEmpty)
            case .codesEmpty: return PredicateExpressions.KeyPath(root: key(p.codes), keyPath: \[Int].isEmpty)
            case .labelsEmpty: return PredicateExpressions.KeyPath(root: key(p.labels), keyPath: \Set<String>.isEmpty)
            case .maybeNil:
                return PredicateExpressions.Equal(lhs: key(p.maybe), rhs: PredicateExpressions.NilLiteral<[String]>())
            case .nLess(let v):
                return PredicateExpressions.Comparison(lhs: key(p.n), rhs: PredicateExpressions.Value(v), op: .lessThan)
            case .and(let l, let r): return conjunction(l.build(root, p), r.build(root, p))
            case .or(let l, let r): return disjunction(l.build(root, p), r.build(root, p))
            case .not(let e): return negation(e.build(root, p))
            }
        }

    }

    static func assign(_ bag: Bag, _ p: PlainBag) {
        bag.tags = p.tags
        bag.codes = p.codes
        bag.labels = p.labels
        bag.maybe = p.maybe
        bag.n = p.n
    }

    /// Runs `count` random predicates against brute force; returns how many the planner answered from an element
    /// index and which indexes it used.
    static func check(
        _ reader: ModelContext, _ plain: [PlainBag], count: Int, _ rng: inout SeededRandom
    ) throws -> (elementPlans: Int, indexes: Set<[String]>) {
        var elementPlans = 0
        var indexes: Set<[String]> = []
        for _ in 0..<count {
            let term = Term.random(depth: 2, &rng)
            let expected = try plain.filter { try term.predicate(plainPaths).evaluate($0) }.map(\.id)
            let descriptor = FetchDescriptor<Bag>(predicate: term.predicate(modelPaths))
            #expect(try reader.fetchIdentifiers(descriptor) == expected, "\(term)")
            #expect(try reader.fetchCount(descriptor) == expected.count, "\(term) counted")
            let plan = try reader.explain(descriptor)
            #expect(!plan.evaluatesOnObjects, "\(term) compiles: \(plan)")
            if let index = plan.index {
                indexes.insert(index)
                if plan.bounds.contains(where: { $0.contains(" contains ") }) { elementPlans += 1 }
            }
        }
        return (elementPlans, indexes)
    }

    @Test func randomCollectionPredicatesMatchBruteForceOverTenThousandObjects() throws {
        var rng = SeededRandom(seed: 1_919_019)
        let store = try Store(models: [Bag.self])
        let context = ModelContext(store)
        var plain: [PlainBag] = []
        var bags: [Bag] = []
        for _ in 0..<10_000 {
            let p = PlainBag.random(&rng)
            let bag = Bag()
            Self.assign(bag, p)
            context.insert(bag)
            plain.append(p)
            bags.append(bag)
        }
        try context.save()
        for i in plain.indices { plain[i].id = bags[i].objectID! }
        #expect(store.snapshot.invariantViolations() == [])

        let first = try Self.check(ModelContext(store), plain, count: 200, &rng)
        #expect(first.elementPlans > 30, "an element index answered only \(first.elementPlans) of 200 predicates")
        #expect(first.indexes.isSuperset(of: [["tags"], ["codes"], ["labels"]]), "\(first.indexes)")

        // Updates of one object, of a few, and of many in one save (9,000 picks, about 5,900 objects: past the 4,096
        // from which a commit nets its index changes on the second core), and deletes: the element indexes follow
        // every change.
        for round in 0..<3 {
            let changed = [1, 20, 9_000][round]
            for _ in 0..<changed {
                let i = Int.random(in: 0..<plain.count, using: &rng)
                var p = PlainBag.random(&rng)
                p.id = plain[i].id
                if Bool.random(using: &rng) { p.tags = plain[i].tags + ["t\(round)"] }
                plain[i] = p
                Self.assign(bags[i], p)
            }
            try context.save()
        }
        for _ in 0..<500 {
            let i = Int.random(in: 0..<plain.count, using: &rng)
            context.delete(bags.remove(at: i))
            plain.remove(at: i)
        }
        try context.save()
        #expect(store.snapshot.invariantViolations() == [])
        let second = try Self.check(ModelContext(store), plain, count: 100, &rng)
        #expect(second.elementPlans > 15, "after changes, an element index answered \(second.elementPlans) of 100")
    }

    @Test func explainShowsTheElementIndexForContains() throws {
        let store = try Store(models: [Bag.self])
        let context = ModelContext(store)
        for i in 0..<1_000 {
            let bag = Bag()
            bag.tags = i % 50 == 0 ? ["rare", "common"] : ["common"]
            bag.codes = [i % 7]
            bag.n = i
            context.insert(bag)
        }
        try context.save()
        let descriptor = FetchDescriptor<Bag>(predicate: #Predicate { $0.tags.contains("rare") && $0.n < 500 })
        let plan = try context.explain(descriptor)
        #expect(plan.access == .indexEquality)
        #expect(plan.index == ["tags"])
        #expect(plan.bounds == ["tags contains \"rare\""])
        #expect(plan.candidates == 20)
        #expect(plan.filters && !plan.evaluatesOnObjects)
        #expect(try context.fetch(descriptor).map(\.n) == [0, 50, 100, 150, 200, 250, 300, 350, 400, 450])
        let codes = try context.explain(FetchDescriptor<Bag>(predicate: #Predicate { $0.codes.contains(3) }))
        #expect(codes.index == ["codes"] && codes.candidates == 143 && !codes.filters, "\(codes)")
        // Negations and emptiness are not index terms: compiled, evaluated per object.
        let empty = try context.explain(FetchDescriptor<Bag>(predicate: #Predicate { !$0.labels.isEmpty }))
        #expect(empty.index == nil && !empty.evaluatesOnObjects, "\(empty)")
        #expect(try context.fetchCount(FetchDescriptor<Bag>(predicate: #Predicate { $0.labels.isEmpty })) == 1_000)
    }

    /// Pending changes are seen: a context's own unsaved collections answer its fetches.
    @Test func pendingCollectionsAnswerTheContextsFetches() throws {
        let store = try Store(models: [Bag.self])
        let context = ModelContext(store)
        let saved = Bag()
        saved.tags = ["a"]
        context.insert(saved)
        try context.save()
        saved.tags = ["b"]
        let fresh = Bag()
        fresh.tags = ["a", "b"]
        context.insert(fresh)
        let withA = try context.fetch(FetchDescriptor<Bag>(predicate: #Predicate { $0.tags.contains("a") }))
        #expect(withA.map(\.tags) == [["a", "b"]])
        let withB = try context.fetchCount(FetchDescriptor<Bag>(predicate: #Predicate { $0.tags.contains("b") }))
        #expect(withB == 2)
    }
}

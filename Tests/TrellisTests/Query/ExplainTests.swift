import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Issue 5's "must show" 6, first half: `explain` shows which index a fetch uses for equality, range, `IN`, unique and
/// compound-index predicates, and predicates the planner cannot use still give the right answer.
@Suite struct ExplainTests {
    private static func store() throws -> (Store, [PlainSample]) {
        let store = try Store(models: [Sample.self])
        var rng = SeededRandom(seed: 7)
        var plain: [PlainSample] = []
        let result = try store.batchInsert(Sample.self, count: 2_000) { i, row in
            let p = PlainSample.random(ObjectID(entity: 0, serial: 0), code: i, &rng)
            plain.append(p)
            row[\.a] = p.a
            row[\.b] = p.b
            row[\.s] = p.s
            row[\.d] = p.d
            row[\.flag] = p.flag
            row[\.opt] = p.opt
            row[\.g] = p.g
            row[\.h] = p.h
            row[\.code] = p.code
        }
        for i in plain.indices { plain[i].id = result.objects[i] }
        return (store, plain)
    }

    private func check(
        _ context: ModelContext, _ plain: [PlainSample], _ descriptor: FetchDescriptor<Sample>,
        _ expected: (PlainSample) -> Bool
    ) throws {
        #expect(try context.fetchIdentifiers(descriptor).sorted() == plain.filter(expected).map(\.id))
        #expect(try context.fetchCount(descriptor) == plain.filter(expected).count)
    }

    @Test func equalityUsesTheIndex() throws {
        let (store, plain) = try Self.store()
        let context = ModelContext(store)
        let descriptor = FetchDescriptor<Sample>(predicate: #Predicate { $0.a == 42 })
        let plan = try context.explain(descriptor)
        #expect(plan.access == .indexEquality && plan.index == ["a"] && !plan.filters)
        #expect(plan.candidates == plain.filter { $0.a == 42 }.count)
        #expect(plan.description.hasPrefix("Sample: index equality on (a) (a = 42)"))
        try check(context, plain, descriptor) { $0.a == 42 }
    }

    @Test func uniqueLookupFindsOneObject() throws {
        let (store, plain) = try Self.store()
        let context = ModelContext(store)
        let descriptor = FetchDescriptor<Sample>(predicate: #Predicate { $0.code == 1234 })
        let plan = try context.explain(descriptor)
        #expect(plan.access == .uniqueLookup && plan.index == ["code"] && plan.candidates == 1)
        try check(context, plain, descriptor) { $0.code == 1234 }
    }

    @Test func rangeUsesTheIndexWithBothBounds() throws {
        let (store, plain) = try Self.store()
        let context = ModelContext(store)
        let descriptor = FetchDescriptor<Sample>(predicate: #Predicate { $0.a >= 10 && $0.a < 20 && $0.b != 3 })
        let plan = try context.explain(descriptor)
        #expect(plan.access == .indexRange && plan.index == ["a"] && plan.filters)
        #expect(plan.bounds == ["a >= 10, a < 20"])
        #expect(plan.candidates == plain.filter { $0.a >= 10 && $0.a < 20 }.count)
        try check(context, plain, descriptor) { $0.a >= 10 && $0.a < 20 && $0.b != 3 }
        let strings = FetchDescriptor<Sample>(predicate: #Predicate { "k40" < $0.s })
        #expect(try context.explain(strings).index == ["s"])
        try check(context, plain, strings) { "k40" < $0.s }
    }

    @Test func aRepeatedBoundKeepsTheStricterOne() throws {
        let (store, plain) = try Self.store()
        let context = ModelContext(store)
        // The inclusive bound after the exclusive one on the same value: the objects equal to it stay out, in the
        // count from the index too.
        let above = FetchDescriptor<Sample>(predicate: #Predicate { $0.a > 40 && $0.a >= 40 })
        #expect(try context.explain(above).bounds == ["a > 40"])
        try check(context, plain, above) { $0.a > 40 }
        let below = FetchDescriptor<Sample>(predicate: #Predicate { $0.a < 40 && $0.a <= 40 })
        #expect(try context.explain(below).bounds == ["a < 40"])
        try check(context, plain, below) { $0.a < 40 }
    }

    @Test func inListProbesTheIndexOncePerValue() throws {
        let (store, plain) = try Self.store()
        let context = ModelContext(store)
        let wanted = [3, 14, 15, 92]
        let descriptor = FetchDescriptor<Sample>(predicate: #Predicate { wanted.contains($0.a) })
        let plan = try context.explain(descriptor)
        #expect(plan.access == .indexIn && plan.index == ["a"] && plan.bounds == ["a IN 4 values"])
        try check(context, plain, descriptor) { wanted.contains($0.a) }
        let optional = FetchDescriptor<Sample>(predicate: #Predicate { $0.opt == nil })
        #expect(try context.explain(optional).index == ["opt"])
        try check(context, plain, optional) { $0.opt == nil }
    }

    @Test func compoundIndexTakesAnEqualityPrefixAndARangeOrList() throws {
        let (store, plain) = try Self.store()
        let context = ModelContext(store)
        let range = FetchDescriptor<Sample>(predicate: #Predicate { $0.g == 3 && $0.h < 10 })
        let plan = try context.explain(range)
        #expect(plan.access == .indexRange && plan.index == ["g", "h"] && plan.bounds == ["g = 3", "h < 10"])
        #expect(!plan.filters)
        try check(context, plain, range) { $0.g == 3 && $0.h < 10 }
        let hs = [5, 50, 95]
        let list = FetchDescriptor<Sample>(predicate: #Predicate { $0.g == 7 && hs.contains($0.h) })
        #expect(try context.explain(list).access == .indexIn)
        #expect(try context.explain(list).index == ["g", "h"])
        try check(context, plain, list) { $0.g == 7 && hs.contains($0.h) }
        let prefix = FetchDescriptor<Sample>(predicate: #Predicate { $0.g == 2 })
        #expect(try context.explain(prefix).access == .indexEquality)
        try check(context, plain, prefix) { $0.g == 2 }
        let suffixOnly = FetchDescriptor<Sample>(predicate: #Predicate { $0.h == 2 })
        #expect(try context.explain(suffixOnly).access == .columnScan)
    }

    @Test func theSmallestCandidateSetWins() throws {
        let (store, plain) = try Self.store()
        let context = ModelContext(store)
        let descriptor = FetchDescriptor<Sample>(predicate: #Predicate { $0.a > 5 && $0.code == 77 && $0.s == "k1" })
        #expect(try context.explain(descriptor).access == .uniqueLookup)
        try check(context, plain, descriptor) { $0.a > 5 && $0.code == 77 && $0.s == "k1" }
    }

    @Test func sortedLimitedFetchesWalkTheIndex() throws {
        let (store, plain) = try Self.store()
        let context = ModelContext(store)
        let descriptor = FetchDescriptor<Sample>(
            predicate: #Predicate { $0.flag }, sortBy: [SortDescriptor(\.a, order: .reverse)], fetchLimit: 7)
        let plan = try context.explain(descriptor)
        #expect(plan.access == .orderedIndexScan && plan.sortedByIndex)
        let expected = plain.filter(\.flag).sorted { ($0.a, $1.id) > ($1.a, $0.id) }.prefix(7).map(\.id)
        #expect(try context.fetchIdentifiers(descriptor) == Array(expected))
    }

    @Test func unplannablePredicatesStillWork() throws {
        let (store, plain) = try Self.store()
        let context = ModelContext(store)
        let scanned = FetchDescriptor<Sample>(predicate: #Predicate { $0.b == 3 || $0.flag })
        #expect(try context.explain(scanned).access == .columnScan)
        try check(context, plain, scanned) { $0.b == 3 || $0.flag }
        // Remainder and ranges are beyond the compiler: Foundation evaluates them on each candidate object.
        let foreign = FetchDescriptor<Sample>(predicate: #Predicate { $0.b % 3 == 1 })
        let plan = try context.explain(foreign)
        #expect(plan.access == .fullScan && plan.evaluatesOnObjects)
        try check(context, plain, foreign) { $0.b % 3 == 1 }
        let mixed = FetchDescriptor<Sample>(predicate: #Predicate { $0.a == 9 && (2...6).contains($0.b) })
        let mixedPlan = try context.explain(mixed)
        #expect(mixedPlan.access == .indexEquality && mixedPlan.evaluatesOnObjects)
        try check(context, plain, mixed) { $0.a == 9 && (2...6).contains($0.b) }
    }
}

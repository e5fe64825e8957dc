import Foundation
import Testing
import Trellis
import TrellisCore

/// An errand with an optional indexed due date and rank, as apps model "maybe scheduled".
final class Errand: Model {
    @Attribute var title = ""
    @Attribute(.indexed) var due: Date?
    @Attribute(.indexed) var rank: Int?

    convenience init(title: String, due: Date?, rank: Int?) {
        self.init()
        self.title = title
        self.due = due
        self.rank = rank
    }
}

/// Issue 16, item 3, first half: a range on an optional indexed attribute was a full scan in every spelling Swift
/// allows (`#Predicate` cannot compare an optional with `<`). The force unwrap after a nil check, `??`, `flatMap` and
/// `if let` forms now probe the index; a fallback that passes the comparison adds the nulls to the probe, and results
/// stay those of a filter by hand, with pending changes too.
@Suite struct OptionalIndexRangeTests {
    static let start = Date(timeIntervalSinceReferenceDate: 800_000_000)
    static let cutoff = start.addingTimeInterval(40 * 86_400)
    static let past = Date.distantPast
    static let far = Date.distantFuture

    /// The values of one errand, for filtering by hand.
    struct Plain {
        var id: ObjectID
        var due: Date?
        var rank: Int?
    }

    /// 1,000 errands, about a third without a due date, a fifth without a rank; the plain values in ID order.
    private static func store() throws -> (Store, [Plain]) {
        let store = try Store(models: [Errand.self])
        let context = ModelContext(store)
        var rng = SeededRandom(seed: 16_3)
        var errands: [Errand] = []
        for i in 0..<1_000 {
            let due = rng.chance(33) ? nil : start.addingTimeInterval(Double(rng.below(100)) * 86_400)
            let rank = rng.chance(20) ? nil : rng.below(50)
            let errand = Errand(title: "e\(i)", due: due, rank: rank)
            context.insert(errand)
            errands.append(errand)
        }
        try context.save()
        let plain = errands.map { Plain(id: $0.objectID!, due: $0.due, rank: $0.rank) }
        return (store, plain.sorted { $0.id < $1.id })
    }

    /// The errands of a context as plain values, read from the objects (pending changes included), in ID order.
    private static func plain(_ context: ModelContext) throws -> [Plain] {
        try context.fetch(FetchDescriptor<Errand>()).map { Plain(id: $0.objectID!, due: $0.due, rank: $0.rank) }
            .sorted { $0.id < $1.id }
    }

    /// Fetch and count agree with the filter by hand.
    private func check(
        _ context: ModelContext, _ plain: [Plain], _ descriptor: FetchDescriptor<Errand>, _ expected: (Plain) -> Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let wanted = plain.filter(expected).map(\.id)
        #expect(try context.fetchIdentifiers(descriptor) == wanted, sourceLocation: sourceLocation)
        #expect(try context.fetchCount(descriptor) == wanted.count, sourceLocation: sourceLocation)
    }

    @Test func aForceUnwrapAfterANilCheckProbesTheIndexRange() throws {
        let (store, plain) = try Self.store()
        let context = ModelContext(store)
        let cutoff = Self.cutoff
        let descriptor = FetchDescriptor<Errand>(predicate: #Predicate { $0.due != nil && $0.due! < cutoff })
        let plan = try context.explain(descriptor)
        #expect(plan.access == .indexRange && plan.index == ["due"] && !plan.filters && !plan.evaluatesOnObjects)
        #expect(plan.bounds == ["due < \(Value.date(cutoff))"])
        #expect(plan.candidates == plain.filter { $0.due.map { $0 < cutoff } ?? false }.count)
        try check(context, plain, descriptor) { $0.due.map { $0 < cutoff } ?? false }
        // The nil check alone is a range too: every value, no nulls.
        let scheduled = FetchDescriptor<Errand>(predicate: #Predicate { $0.due != nil })
        #expect(try context.explain(scheduled).bounds == ["due != null"])
        try check(context, plain, scheduled) { $0.due != nil }
        // Both bounds, the unwrap on the left or the right.
        let start = Self.start.addingTimeInterval(10 * 86_400)
        let between = FetchDescriptor<Errand>(
            predicate: #Predicate { $0.due != nil && start <= $0.due! && $0.due! <= cutoff })
        let betweenPlan = try context.explain(between)
        #expect(betweenPlan.access == .indexRange && !betweenPlan.filters)
        #expect(betweenPlan.bounds == ["due >= \(Value.date(start)), due <= \(Value.date(cutoff))"])
        try check(context, plain, between) { $0.due.map { start <= $0 && $0 <= cutoff } ?? false }
    }

    @Test func aCoalescedFallbackThatFailsLeavesTheNullsOut() throws {
        let (store, plain) = try Self.store()
        let context = ModelContext(store)
        let (cutoff, far, past) = (Self.cutoff, Self.far, Self.past)
        let before = FetchDescriptor<Errand>(predicate: #Predicate { ($0.due ?? far) < cutoff })
        let plan = try context.explain(before)
        #expect(plan.access == .indexRange && plan.index == ["due"] && !plan.filters)
        #expect(plan.bounds == ["due < \(Value.date(cutoff))"])
        try check(context, plain, before) { ($0.due ?? far) < cutoff }
        let after = FetchDescriptor<Errand>(predicate: #Predicate { ($0.due ?? past) >= cutoff })
        #expect(try context.explain(after).bounds == ["due >= \(Value.date(cutoff))"])
        try check(context, plain, after) { ($0.due ?? past) >= cutoff }
    }

    @Test func aCoalescedFallbackThatPassesAddsTheNullsToTheProbe() throws {
        let (store, plain) = try Self.store()
        let context = ModelContext(store)
        let (cutoff, far, past) = (Self.cutoff, Self.far, Self.past)
        // Nulls sort first in the index: next to a range open at the bottom, one probe.
        let before = FetchDescriptor<Errand>(predicate: #Predicate { ($0.due ?? past) < cutoff })
        let plan = try context.explain(before)
        #expect(plan.access == .indexRange && plan.index == ["due"] && !plan.filters)
        #expect(plan.bounds == ["due = null or due < \(Value.date(cutoff))"])
        #expect(plan.candidates == plain.filter { ($0.due ?? past) < cutoff }.count)
        try check(context, plain, before) { ($0.due ?? past) < cutoff }
        // Apart from the range: a null probe and a range probe.
        let after = FetchDescriptor<Errand>(predicate: #Predicate { ($0.due ?? far) > cutoff })
        let afterPlan = try context.explain(after)
        #expect(afterPlan.bounds == ["due = null or due > \(Value.date(cutoff))"])
        #expect(afterPlan.candidates == plain.filter { ($0.due ?? far) > cutoff }.count)
        try check(context, plain, after) { ($0.due ?? far) > cutoff }
        // An equality whose fallback is the value: the nulls and the value.
        let unranked = FetchDescriptor<Errand>(predicate: #Predicate { ($0.rank ?? 0) == 0 })
        let unrankedPlan = try context.explain(unranked)
        #expect(unrankedPlan.access == .indexIn && unrankedPlan.bounds == ["rank = null or rank = 0"])
        try check(context, plain, unranked) { ($0.rank ?? 0) == 0 }
        let seven = FetchDescriptor<Errand>(predicate: #Predicate { ($0.rank ?? 0) == 7 })
        #expect(try context.explain(seven).access == .indexEquality)
        try check(context, plain, seven) { ($0.rank ?? 0) == 7 }
    }

    @Test func flatMapAndIfLetProbeTheIndexRange() throws {
        let (store, plain) = try Self.store()
        let context = ModelContext(store)
        let cutoff = Self.cutoff
        let flatMapped = FetchDescriptor<Errand>(predicate: #Predicate { $0.due.flatMap { $0 < cutoff } == true })
        let plan = try context.explain(flatMapped)
        #expect(plan.access == .indexRange && plan.index == ["due"] && !plan.filters)
        #expect(plan.bounds == ["due < \(Value.date(cutoff))"])
        try check(context, plain, flatMapped) { $0.due.map { $0 < cutoff } ?? false }
        let ifLet = FetchDescriptor<Errand>(
            predicate: #Predicate { if let due = $0.due { due < cutoff } else { false } })
        let ifLetPlan = try context.explain(ifLet)
        #expect(ifLetPlan.access == .indexRange && ifLetPlan.bounds == ["due < \(Value.date(cutoff))"])
        try check(context, plain, ifLet) { $0.due.map { $0 < cutoff } ?? false }
        let coalesced = FetchDescriptor<Errand>(predicate: #Predicate { $0.rank.flatMap { $0 >= 45 } ?? false })
        #expect(try context.explain(coalesced).bounds == ["rank >= 45"])
        try check(context, plain, coalesced) { $0.rank.map { $0 >= 45 } ?? false }
    }

    @Test func guardedUnwrapsCompileAndUnguardedOnesStayFoundations() throws {
        let (store, plain) = try Self.store()
        let context = ModelContext(store)
        let cutoff = Self.cutoff
        // `||` proves the value for its right side; not a conjunction, so no index, but compiled.
        let either = FetchDescriptor<Errand>(predicate: #Predicate { $0.due == nil || $0.due! < cutoff })
        #expect(try !context.explain(either).evaluatesOnObjects)
        try check(context, plain, either) { $0.due.map { $0 < cutoff } ?? true }
        let ternary = FetchDescriptor<Errand>(predicate: #Predicate { $0.rank != nil ? $0.rank! > 40 : false })
        #expect(try !context.explain(ternary).evaluatesOnObjects)
        try check(context, plain, ternary) { $0.rank.map { $0 > 40 } ?? false }
        // Without a nil check Foundation evaluates it, and throws for a nil as it always did.
        let unguarded = FetchDescriptor<Errand>(predicate: #Predicate { $0.due! < cutoff })
        #expect(try context.explain(unguarded).evaluatesOnObjects)
        #expect(throws: (any Error).self) { try context.fetch(unguarded) }
    }

    @Test func pendingChangesAreMergedIntoOptionalRanges() throws {
        let (store, _) = try Self.store()
        let context = ModelContext(store)
        let (cutoff, far, past) = (Self.cutoff, Self.far, Self.past)
        var rng = SeededRandom(seed: 316)
        let errands = try context.fetch(FetchDescriptor<Errand>())
        for errand in errands where rng.chance(10) {
            switch rng.below(4) {
            case 0: errand.due = nil
            case 1: errand.due = Self.start.addingTimeInterval(Double(rng.below(100)) * 86_400)
            case 2: errand.rank = errand.rank == nil ? rng.below(50) : nil
            default: context.delete(errand)
            }
        }
        for i in 0..<50 {
            let due = rng.chance(40) ? nil : Self.start.addingTimeInterval(Double(rng.below(100)) * 86_400)
            context.insert(Errand(title: "new \(i)", due: due, rank: rng.chance(30) ? nil : rng.below(50)))
        }
        let plain = try Self.plain(context)
        #expect(plain.count != 1_000)
        let unwrapped = FetchDescriptor<Errand>(predicate: #Predicate { $0.due != nil && $0.due! < cutoff })
        #expect(try context.explain(unwrapped).access == .indexRange)
        try check(context, plain, unwrapped) { $0.due.map { $0 < cutoff } ?? false }
        try check(context, plain, FetchDescriptor(predicate: #Predicate { ($0.due ?? past) < cutoff })) {
            ($0.due ?? past) < cutoff
        }
        try check(context, plain, FetchDescriptor(predicate: #Predicate { ($0.due ?? far) > cutoff })) {
            ($0.due ?? far) > cutoff
        }
        try check(context, plain, FetchDescriptor(predicate: #Predicate { ($0.rank ?? 0) == 0 })) {
            ($0.rank ?? 0) == 0
        }
        try check(
            context, plain,
            FetchDescriptor(predicate: #Predicate { if let due = $0.due { due >= cutoff } else { false } })
        ) { $0.due.map { $0 >= cutoff } ?? false }
    }

    @Test func sortedLimitedFetchesWalkTheNullsAndTheRangeInOrder() throws {
        let (store, plain) = try Self.store()
        let context = ModelContext(store)
        let (cutoff, far) = (Self.cutoff, Self.far)
        // Nulls first ascending (as the index and `Value` order them), last descending; ties by ID.
        func order(_ ascending: Bool) -> (Plain, Plain) -> Bool {
            { x, y in
                let (p, q) = (x.due ?? .distantPast, y.due ?? .distantPast)
                if x.due == nil && y.due != nil { return ascending }
                if x.due != nil && y.due == nil { return !ascending }
                return p == q ? x.id < y.id : (p < q) == ascending
            }
        }
        for ascending in [true, false] {
            let descriptor = FetchDescriptor<Errand>(
                predicate: #Predicate { ($0.due ?? far) > cutoff },
                sortBy: [SortDescriptor(\.due, order: ascending ? .forward : .reverse)], fetchLimit: 300)
            let plan = try context.explain(descriptor)
            #expect(plan.access == .orderedIndexScan && plan.sortedByIndex)
            #expect(plan.bounds == ["due = null or due > \(Value.date(cutoff))"])
            let expected = plain.filter { ($0.due ?? far) > cutoff }.sorted(by: order(ascending)).prefix(300)
            #expect(try context.fetchIdentifiers(descriptor) == expected.map(\.id), "ascending: \(ascending)")
        }
    }
}

import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Issue 5's "must show" 6, second half: every query's results equal a brute-force filter (Foundation evaluating the
/// same predicate over plain values) on 10,000 random objects, for 240 random predicates, half of them run in a
/// context with pending inserts, updates and deletes, with random sorts, offsets and limits.
@Suite struct RandomPredicateTests {
    static let modelPaths = SampleKeyPaths<Sample>(
        int: [.a: \.a, .b: \.b, .g: \.g, .h: \.h, .code: \.code], s: \.s, d: \.d, flag: \.flag, opt: \.opt)
    static let plainPaths = SampleKeyPaths<PlainSample>(
        int: [.a: \.a, .b: \.b, .g: \.g, .h: \.h, .code: \.code], s: \.s, d: \.d, flag: \.flag, opt: \.opt)

    /// A random sort over attributes (ties by ID), in both forms.
    private struct RandomSort {
        var field: Int
        var forward: Bool

        var descriptor: SortDescriptor<Sample> {
            let order: SortOrder = forward ? .forward : .reverse
            switch field {
            case 0: return SortDescriptor(\.a, order: order)
            case 1: return SortDescriptor(\.s, order: order)
            case 2: return SortDescriptor(\.d, order: order)
            case 3: return SortDescriptor(\.opt, order: order)
            default: return SortDescriptor(\.h, order: order)
            }
        }

        func precedes(_ x: PlainSample, _ y: PlainSample) -> Bool {
            let c: Int
            switch field {
            case 0: c = x.a < y.a ? -1 : (x.a == y.a ? 0 : 1)
            case 1: c = x.s < y.s ? -1 : (x.s == y.s ? 0 : 1)
            case 2: c = x.d < y.d ? -1 : (x.d == y.d ? 0 : 1)
            case 3:
                let (p, q) = (x.opt ?? .min, y.opt ?? .min)
                c = p < q ? -1 : (p == q ? 0 : 1)
            default: c = x.h < y.h ? -1 : (x.h == y.h ? 0 : 1)
            }
            return c == 0 ? x.id < y.id : (c < 0) == forward
        }
    }

    @Test func randomPredicatesMatchBruteForceOverTenThousandObjects() throws {
        var rng = SeededRandom(seed: 2024)
        let store = try Store(models: [Sample.self])
        var plain: [PlainSample] = []
        let inserted = try store.batchInsert(Sample.self, count: 10_000) { i, row in
            let p = PlainSample.random(ObjectID(entity: 0, serial: 0), code: i, &rng)
            plain.append(p)
            for (field, path) in Self.modelPaths.int { row[path] = Self.plainPaths.int[field].map { p[keyPath: $0] }! }
            row[\.s] = p.s
            row[\.d] = p.d
            row[\.flag] = p.flag
            row[\.opt] = p.opt
        }
        for i in plain.indices { plain[i].id = inserted.objects[i] }

        let clean = ModelContext(store)
        try runQueries(120, clean, plain, &rng)

        // Pending changes: 300 inserts, 500 updates (some crossing index ranges), 400 deletes.
        let pending = ModelContext(store)
        var shuffled = plain.indices.shuffled(using: &rng)
        var changed = plain
        for i in shuffled.prefix(400) {
            pending.delete(pending.model(for: plain[i].id, as: Sample.self)!)
        }
        shuffled.removeFirst(400)
        for i in shuffled.prefix(500) {
            var p = PlainSample.random(plain[i].id, code: plain[i].code, &rng)
            p.code = plain[i].code
            p.apply(to: pending.model(for: p.id, as: Sample.self)!)
            changed[i] = p
        }
        changed = changed.filter { pending.exists($0.id) }
        for n in 0..<300 {
            let sample = Sample()
            var p = PlainSample.random(ObjectID(entity: 0, serial: 0), code: 20_000 + n, &rng)
            p.apply(to: sample)
            pending.insert(sample)
            p.id = sample.objectID!
            changed.append(p)
        }
        changed.sort { $0.id < $1.id }
        #expect(changed.count == 9_900)
        try runQueries(120, pending, changed, &rng)
    }

    private func runQueries(
        _ count: Int, _ context: ModelContext, _ plain: [PlainSample], _ rng: inout SeededRandom
    ) throws {
        var planned = 0
        for _ in 0..<count {
            let random = RandomPredicate.random(depth: 2, &rng)
            let predicate = random.predicate(Self.modelPaths)
            let brute = random.predicate(Self.plainPaths)
            let expected = try plain.filter { try brute.evaluate($0) }
            var descriptor = FetchDescriptor<Sample>(predicate: predicate)
            #expect(try context.fetchIdentifiers(descriptor) == expected.map(\.id), "\(random)")
            #expect(try context.fetchCount(descriptor) == expected.count, "\(random)")
            if ![.fullScan, .columnScan].contains(try context.explain(descriptor).access) { planned += 1 }
            let sort = RandomSort(field: Int.random(in: 0..<5, using: &rng), forward: Bool.random(using: &rng))
            descriptor.sortBy = [sort.descriptor]
            descriptor.fetchOffset = Int.random(in: 0..<3, using: &rng) == 0 ? Int.random(in: 0..<50, using: &rng) : nil
            descriptor.fetchLimit = Bool.random(using: &rng) ? Int.random(in: 1..<40, using: &rng) : nil
            let ordered = expected.sorted(by: sort.precedes)
                .dropFirst(descriptor.fetchOffset ?? 0).prefix(descriptor.fetchLimit ?? .max)
            #expect(
                try context.fetchIdentifiers(descriptor) == ordered.map(\.id),
                "\(random) sorted by \(sort) offset \(descriptor.fetchOffset ?? 0) limit \(descriptor.fetchLimit ?? -1)"
            )
        }
        #expect(planned > count / 5, "the planner used an index for only \(planned) of \(count) predicates")
    }
}

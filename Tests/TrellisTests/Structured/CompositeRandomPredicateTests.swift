import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Issue 19, must-show a: the random-predicate suite's predicates over the fields of a composite attribute (two
/// levels deep, with an optional field and indexes on fields), against Foundation's brute force over 10,000 plain
/// values; the planner uses the fields' indexes as it does attributes'.
@Suite struct CompositeRandomPredicateTests {
    struct Inner: Codable {
        var g = 0
        var h = 0
    }

    struct Record: Codable {
        var a = 0
        var b = 0
        var s = ""
        var d = 0.0
        var flag = false
        var opt: Int?
        var inner = Inner()
        var code = 0
    }

    final class Holder: Model {
        @Attribute var record = Record()

        override class var indexes: [ModelIndex] {
            [
                .index(\Holder.record.a), .index(\Holder.record.s), .index(\Holder.record.opt),
                .unique(\Holder.record.code), .index(\Holder.record.inner.g, \Holder.record.inner.h),
            ]
        }
    }

    /// Foundation's `PredicateExpressions.KeyPath` takes one-component key paths only (`#Predicate` nests one per
    /// step, which `CompositeAttributeTests` covers), so the builder reaches the fields through computed properties of
    /// the model; the key path probe sees which field each one reads, and they compile to the fields' columns.
    static let modelPaths = SampleKeyPaths<Holder>(
        int: [.a: \.a, .b: \.b, .g: \.g, .h: \.h, .code: \.code], s: \.s, d: \.d, flag: \.flag, opt: \.opt)
    static let plainPaths = RandomPredicateTests.plainPaths

    static func record(_ p: PlainSample) -> Record {
        Record(
            a: p.a, b: p.b, s: p.s, d: p.d, flag: p.flag, opt: p.opt, inner: Inner(g: p.g, h: p.h), code: p.code)
    }

    @Test func randomPredicatesOverCompositeFieldsMatchBruteForceOverTenThousandObjects() throws {
        var rng = SeededRandom(seed: 1919)
        let store = try Store(models: [Holder.self])
        let context = ModelContext(store)
        var plain: [PlainSample] = []
        var holders: [Holder] = []
        for i in 0..<10_000 {
            let p = PlainSample.random(ObjectID(entity: 0, serial: 0), code: i, &rng)
            let holder = Holder()
            holder.record = Self.record(p)
            context.insert(holder)
            plain.append(p)
            holders.append(holder)
        }
        try context.save()
        for i in plain.indices { plain[i].id = holders[i].objectID! }

        let reader = ModelContext(store)
        var planned = 0
        var indexes: Set<[String]> = []
        for _ in 0..<200 {
            let random = RandomPredicate.random(depth: 2, &rng)
            let expected = try plain.filter { try random.predicate(Self.plainPaths).evaluate($0) }
            var descriptor = FetchDescriptor<Holder>(predicate: random.predicate(Self.modelPaths))
            #expect(try reader.fetchIdentifiers(descriptor) == expected.map(\.id), "\(random)")
            let plan = try reader.explain(descriptor)
            #expect(!plan.evaluatesOnObjects, "\(random) compiles to columns: \(plan)")
            if let index = plan.index {
                planned += 1
                indexes.insert(index)
            }
            descriptor.sortBy = [SortDescriptor(\.record.s), SortDescriptor(\.record.inner.h, order: .reverse)]
            let sorted = expected.sorted { x, y in
                x.s != y.s ? x.s < y.s : x.h != y.h ? x.h > y.h : x.id < y.id
            }
            #expect(try reader.fetchIdentifiers(descriptor) == sorted.map(\.id), "\(random) sorted")
        }
        #expect(planned > 40, "the planner used a field's index for only \(planned) of 200 predicates")
        #expect(
            indexes.isSuperset(of: [["record.a"], ["record.code"], ["record.inner.g", "record.inner.h"]]),
            "\(indexes)")
    }
}

extension CompositeRandomPredicateTests.Holder {
    var a: Int { record.a }
    var b: Int { record.b }
    var g: Int { record.inner.g }
    var h: Int { record.inner.h }
    var code: Int { record.code }
    var s: String { record.s }
    var d: Double { record.d }
    var flag: Bool { record.flag }
    var opt: Int? { record.opt }
}

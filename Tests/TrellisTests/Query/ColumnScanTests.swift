import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// The column path (`ColumnPredicate` masks over leaves) selects exactly what `QueryEvaluator` selects row by row:
/// 400 random predicates over nullable bool, integer, double and date columns with negative numbers, ±0, infinities,
/// NaN and NaN dates, in leaves with holes and a missing leaf after deletes, alone and merged with pending inserts,
/// updates and deletes through the executor (100 more predicates).
@Suite struct ColumnScanTests {
    /// Attribute positions of `Reading`.
    static let flag = 0
    static let int = 1
    static let double = 2
    static let date = 3
    static let text = 4

    static let schema = try! Schema([
        EntityDescription(
            "Reading",
            attributes: [
                AttributeDescription("flag", .bool, optional: true),
                AttributeDescription("int", .int64, optional: true),
                AttributeDescription("double", .double, optional: true),
                AttributeDescription("date", .date, optional: true),
                AttributeDescription("text", .string, optional: true),
            ])
    ])

    static let ints: [Int64] = [-3, -2, -1, 0, 1, 2, 3, .min, .max]
    static let doubles: [Double] = [-2.5, -1, -0.0, 0, 1, 2.5, .infinity, -.infinity, .nan]
    static let dates: [Date] =
        (-2...2).map { Date(timeIntervalSinceReferenceDate: Double($0) * 3600) }
        + [Date(timeIntervalSinceReferenceDate: .nan)]
    static let texts = ["", "a", "b"]

    /// A random non-null value of the attribute.
    static func value(_ attribute: Int, _ rng: inout SeededRandom) -> Value {
        switch attribute {
        case flag: return .bool(Bool.random(using: &rng))
        case int: return .int(ints.randomElement(using: &rng)!)
        case double: return .double(doubles.randomElement(using: &rng)!)
        case date: return .date(dates.randomElement(using: &rng)!)
        default: return .string(texts.randomElement(using: &rng)!)
        }
    }

    /// A random row, each attribute null one time in five.
    static func row(_ rng: inout SeededRandom) -> [Value] {
        (0..<5).map { a in Int.random(in: 0..<5, using: &rng) == 0 ? .null : value(a, &rng) }
    }

    /// A constant to compare an attribute with: null, an integer against the double column, or a value of its type.
    static func constant(_ attribute: Int, _ rng: inout SeededRandom) -> Value {
        switch Int.random(in: 0..<8, using: &rng) {
        case 0: return .null
        case 1 where attribute == double: return .int(ints.prefix(7).randomElement(using: &rng)!)
        default: return value(attribute, &rng)
        }
    }

    static func expression(depth: Int, _ rng: inout SeededRandom) -> QueryExpression {
        if depth > 0 && Int.random(in: 0..<3, using: &rng) == 0 {
            switch Int.random(in: 0..<5, using: &rng) {
            case 0, 1: return .and(expression(depth: depth - 1, &rng), expression(depth: depth - 1, &rng))
            case 2, 3: return .or(expression(depth: depth - 1, &rng), expression(depth: depth - 1, &rng))
            default: return .not(expression(depth: depth - 1, &rng))
            }
        }
        let a = Int.random(in: 0..<5, using: &rng)
        let attribute = QueryExpression.attribute(slot: 0, hops: [], attribute: a)
        switch Int.random(in: 0..<10, using: &rng) {
        case 0: return .attribute(slot: 0, hops: [], attribute: flag)
        case 1: return .constant(.bool(Bool.random(using: &rng)))
        case 2:
            let values = (0..<Int.random(in: 0...4, using: &rng)).map { _ in constant(a, &rng) }
            return .isIn(attribute, Set(values))
        default:
            let ops: [QueryExpression.Comparison] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]
            let op = ops.randomElement(using: &rng)!
            let c = QueryExpression.constant(constant(a, &rng))
            return Bool.random(using: &rng) ? .compare(op, attribute, c) : .compare(op, c, attribute)
        }
    }

    /// Whether the expression should have a column form: everything but comparisons of strings with non-null values.
    static func hasColumnForm(_ e: QueryExpression) -> Bool {
        switch e {
        case .and(let l, let r), .or(let l, let r): return hasColumnForm(l) && hasColumnForm(r)
        case .not(let inner): return hasColumnForm(inner)
        case .compare(_, .attribute(_, _, let a), .constant(let v)),
            .compare(_, .constant(let v), .attribute(_, _, let a)):
            return a != text || v.isNull
        case .isIn(.attribute(_, _, let a), let values): return a != text || values.allSatisfy(\.isNull)
        default: return true
        }
    }

    /// A store of 3,000 random readings, a fifth of them deleted at random and all of serials 64…127 (a whole leaf).
    static func store(_ rng: inout SeededRandom) throws -> Store {
        let store = Store(schema: schema)
        var ids: [ObjectID] = []
        try store.write { tx in
            for _ in 0..<3_000 { ids.append(tx.insert(entity: 0, row: row(&rng))) }
        }
        try store.write { tx in
            for id in ids where (64..<128).contains(id.serial) || Int.random(in: 0..<5, using: &rng) == 0 {
                try tx.delete(id)
            }
        }
        return store
    }

    /// What the row evaluator selects among the given objects of the view, in ID order.
    static func evaluated(_ e: QueryExpression, _ view: ContextView, _ ids: [ObjectID]) -> [ObjectID] {
        var evaluator = QueryEvaluator(view: view)
        return ids.filter { view.exists($0) && evaluator.test(e, ViewRow(view: view, id: $0)) }
    }

    @Test func masksSelectWhatTheEvaluatorSelects() throws {
        var rng = SeededRandom(seed: 64)
        let graph = try Self.store(&rng).snapshot
        let layout = graph.schema.layouts[0]
        let view = ContextView(base: graph, layers: [])
        let all = graph.objectIDs(entity: 0)
        #expect(all.count < 2_450 && !all.contains { (64..<128).contains($0.serial) })
        var compiled = 0
        for _ in 0..<400 {
            let e = Self.expression(depth: 3, &rng)
            guard let predicate = ColumnPredicate(e, layout: layout) else {
                #expect(!Self.hasColumnForm(e), "no column form for \(e)")
                continue
            }
            compiled += 1
            var masked: [ObjectID] = []
            graph.forEachMatchingLeaf(entity: 0, where: predicate) { key, _, rows in
                var rest = rows
                while rest != 0 {
                    masked.append(ObjectID(entity: 0, serial: key << 6 | UInt64(rest.trailingZeroBitCount)))
                    rest &= rest - 1
                }
                return true
            }
            let expected = Self.evaluated(e, view, all)
            #expect(masked == expected, "\(e)")
            #expect(graph.countRows(entity: 0, where: predicate) == expected.count, "\(e)")
        }
        #expect(compiled > 300)
    }

    @Test func executorMergesPendingChangesIntoColumnScans() throws {
        var rng = SeededRandom(seed: 65)
        let graph = try Self.store(&rng).snapshot
        let base = graph.objectIDs(entity: 0)
        let pending = PendingChanges()
        for id in base.shuffled(using: &rng).prefix(300) {
            if Bool.random(using: &rng) {
                pending.delete(id, requested: true)
            } else {
                let a = Int.random(in: 0..<5, using: &rng)
                pending.set(id, a, Int.random(in: 0..<5, using: &rng) == 0 ? .null : Self.value(a, &rng))
            }
        }
        var inserted: [ObjectID] = []
        for n in 0..<200 {
            let id = ObjectID(entity: 0, serial: graph.maxSerials[0] + 1 + UInt64(n))
            pending.insert(id, row: Self.row(&rng))
            inserted.append(id)
        }
        let view = ContextView(base: graph, layers: [pending])
        let everything = base + inserted
        var columnScans = 0
        for _ in 0..<100 {
            let e = Self.expression(depth: 3, &rng)
            let expected = Self.evaluated(e, view, everything)
            let plain = QueryExecutor(
                view: view, entity: 0, predicate: e, objectTest: nil, sort: [], objectOrder: nil, offset: 0, limit: nil)
            if plain.plan().kind == .columnScan { columnScans += 1 }
            #expect(plain.identifiers() == expected, "\(e)")
            #expect(plain.count() == expected.count, "\(e)")
            // Sorted by the double column with a window: the sort keys are read from the leaves.
            let limit = Int.random(in: 1..<50, using: &rng)
            let sorted = QueryExecutor(
                view: view, entity: 0, predicate: e, objectTest: nil,
                sort: [SortKey(attribute: Self.double, ascending: false)], objectOrder: nil, offset: 3, limit: limit)
            let order = expected.sorted { x, y in
                let c = Value.compare(view.value(x, Self.double)!, view.value(y, Self.double)!)
                return c != 0 ? c > 0 : x < y
            }
            #expect(sorted.identifiers() == Array(order.dropFirst(3).prefix(limit)), "\(e) sorted")
            // A limit with no sort stops the scan early: the first matches in ID order.
            let first = QueryExecutor(
                view: view, entity: 0, predicate: e, objectTest: nil, sort: [], objectOrder: nil, offset: 0, limit: 5)
            #expect(first.identifiers() == Array(expected.prefix(5)), "\(e) limit 5")
        }
        #expect(columnScans > 70)
    }

    @Test func emptyEntitiesAndCountsByValue() throws {
        let empty = Graph(schema: Self.schema)
        let flagged = QueryExpression.attribute(slot: 0, hops: [], attribute: Self.flag)
        let predicate = try #require(ColumnPredicate(flagged, layout: empty.schema.layouts[0]))
        #expect(empty.countRows(entity: 0, where: predicate) == 0)
        #expect(empty.countRows(entity: 7, where: predicate) == 0)
        let executor = QueryExecutor(
            view: ContextView(base: empty, layers: []), entity: 0, predicate: flagged, objectTest: nil, sort: [],
            objectOrder: nil, offset: 0, limit: nil)
        #expect(executor.plan().kind == .columnScan && executor.count() == 0 && executor.identifiers().isEmpty)

        var rng = SeededRandom(seed: 66)
        let graph = try Self.store(&rng).snapshot
        let view = ContextView(base: graph, layers: [])
        let all = graph.objectIDs(entity: 0)
        for a in [Self.flag, Self.int, Self.double, Self.date] {
            for v in [Value.null, Self.value(a, &rng)] {
                let e = QueryExpression.compare(
                    .equal, .attribute(slot: 0, hops: [], attribute: a), .constant(v))
                #expect(graph.countRows(entity: 0, where: a, equals: v) == Self.evaluated(e, view, all).count)
            }
        }
        #expect(graph.countRows(entity: 0, where: Self.text, equals: "a") == nil)
    }

    @Test func typedPredicatesCountsAndAggregatesSeePendingChanges() throws {
        let store = try makeStore()
        let seed = ModelContext(store)
        let chores = (0..<300).map { Chore(title: "c\($0)", estimate: $0 % 9 - 4, done: $0 % 3 == 0) }
        for chore in chores { seed.insert(chore) }
        try seed.save()
        let context = ModelContext(store)
        for chore in chores.prefix(30) { context.delete(context.model(for: chore.objectID!, as: Chore.self)!) }
        for chore in chores[30..<60] { context.model(for: chore.objectID!, as: Chore.self)!.done.toggle() }
        for n in 0..<10 { context.insert(Chore(title: "new \(n)", done: true)) }
        let open = FetchDescriptor<Chore>(predicate: #Predicate { $0.done && $0.title != "c99" })
        // The string term has no column form, so this one is evaluated row by row.
        #expect(try context.explain(open).access == .fullScan)
        let expected = try context.fetch(FetchDescriptor<Chore>()).filter { $0.done && $0.title != "c99" }
        #expect(try context.fetchCount(open) == expected.count)
        let flagged = FetchDescriptor<Chore>(predicate: #Predicate { $0.done })
        #expect(try context.explain(flagged).access == .columnScan)
        let done = try context.fetch(FetchDescriptor<Chore>()).filter(\.done)
        #expect(try context.fetchIdentifiers(flagged) == done.map { $0.objectID! })
        #expect(try context.fetchCount(flagged) == done.count)
        let counts = try context.aggregate(flagged, [.count, .count])
        #expect(counts == [AggregateRow(group: [:], values: ["count": .int(Int64(done.count))])])
        #expect(try ModelContext(store).fetchCount(flagged) == 100)
    }

    @Test func explainNamesTheColumnScan() throws {
        var rng = SeededRandom(seed: 67)
        let graph = try Self.store(&rng).snapshot
        let query = DynamicQuery("Reading", where: .or([.equal("flag", true), .less("int", -1)]))
        let plan = try graph.explain(query)
        #expect(plan.access == .columnScan && plan.index == nil)
        #expect(plan.description.hasPrefix("Reading: column scan, ~\(graph.count(entity: 0)) candidates"))
        // A string comparison has no column form: the rows are evaluated one by one.
        #expect(try graph.explain(DynamicQuery("Reading", where: .equal("text", "a"))).access == .fullScan)
    }
}

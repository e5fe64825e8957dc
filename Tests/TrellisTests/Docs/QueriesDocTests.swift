import Foundation
import Testing
import Trellis

/// The examples of "Queries and Indexes" (Trellis.docc/QueriesAndIndexes.md), verbatim, run and checked (see
/// `ReadmeTests` for how). `Chore` is the test module's model (`due` and `estimate` indexed).
@MainActor @Suite struct QueriesDocTests {
    /// 200 saved chores: chore i is due i hours after `start`, estimated i % 10, done when i % 4 == 0.
    private func seeded() throws -> (Store, ModelContext, start: Date) {
        let store = try makeStore()
        let context = ModelContext(store)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        for i in 0..<200 {
            context.insert(
                Chore(title: "chore \(i)", due: start + Double(i) * 3600, estimate: i % 10, done: i % 4 == 0))
        }
        try context.save()
        return (store, context, start)
    }

    @Test func theDescriptorFetchesTheFirstFiftyOpenChoresDueBeforeTheDeadline() throws {
        let (_, context, start) = try seeded()
        let deadline = start + 100 * 3600

        var descriptor = FetchDescriptor<Chore>(
            predicate: #Predicate { !$0.done && $0.due < deadline },
            sortBy: [SortDescriptor(\.due)])
        descriptor.fetchLimit = 50
        let next = try context.fetch(descriptor)

        let expected = (0..<100).filter { $0 % 4 != 0 }.prefix(50).map { "chore \($0)" }
        #expect(next.map(\.title) == Array(expected))
    }

    // swift-format-ignore
    @Test func explainPrintsTheIndexRangeOnEstimate() throws {
        let printed = Printed()
        func print(_ items: Any...) { printed.append(items) }
        let (_, context, _) = try seeded()

        let plan = try context.explain(FetchDescriptor<Chore>(predicate: #Predicate { $0.estimate > 3 }))
        print(plan)   // Chore: index range on (estimate) (estimate > 3), ~120 candidates; filter: none; sort: in memory

        #expect(
            printed.lines == [
                "Chore: index range on (estimate) (estimate > 3), ~120 candidates; filter: none; sort: in memory"
            ])
    }

    @Test func theBatchUpdateMarksTheChoresDueBeforeNowDoneInOneCommit() async throws {
        let (store, _, start) = try seeded()
        let now = start + 10 * 3600
        let sequence = store.snapshot.sequence
        var reports = store.viewContext.changes().makeAsyncIterator()

        try store.batchUpdate(Chore.self, where: #Predicate { $0.due < now }, set: [.init(\.done, true)])

        #expect(store.snapshot.sequence == sequence + 1)
        let context = ModelContext(store)
        #expect(try context.fetchCount(FetchDescriptor<Chore>(predicate: #Predicate { $0.due < now && $0.done })) == 10)
        #expect(try context.fetchCount(FetchDescriptor<Chore>(predicate: #Predicate { $0.done })) == 10 + 47)
        let report = try #require(await reports.next())
        #expect(report.updated.count == 7, "the seven of the ten that were not done yet")
    }

    @Test func theDynamicQueryFindsTheOpenChoresDueBeforeTheDeadlineByName() throws {
        let (store, _, start) = try seeded()
        let deadline = start + 100 * 3600

        let query = DynamicQuery(
            "Chore", where: .and([.equal("done", false), .less("due", .date(deadline))]),
            sortBy: [.init("due")], limit: 50)
        let ids = try store.snapshot.fetch(query)
        let open = try store.snapshot.count(query)

        let titles = try ids.map { try store.snapshot.value($0, "title") }
        #expect(titles == (0..<100).filter { $0 % 4 != 0 }.prefix(50).map { .string("chore \($0)") })
        #expect(open == 50, "the limit applies to the count too")
    }

    // swift-format-ignore
    @Test func theIndexScanReadsOneWeekFromMondayToTheNextMonday() throws {
        let (store, _, start) = try seeded()
        let monday = start + 24 * 3600
        let nextMonday = monday + 7 * 24 * 3600
        let snapshot = store.snapshot

        let due = try store.schema.index("Chore", ["due"])
        let thisWeek = snapshot.scan(due, from: [.date(monday)], inclusive: true, to: [.date(nextMonday)], inclusive: false)

        let titles = try thisWeek.map { try snapshot.value($0, "title") }
        #expect(titles == (24..<192).map { .string("chore \($0)") })
    }

    // swift-format-ignore
    @Test func theIndexRowsReadTheSameWeekInIndexOrder() throws {
        let (store, _, start) = try seeded()
        let monday = start + 24 * 3600
        let nextMonday = monday + 7 * 24 * 3600
        let snapshot = store.snapshot
        let due = try store.schema.index("Chore", ["due"])

        let title = try store.schema.attribute("Chore", "title")
        var titles: [String] = []
        for row in snapshot.rows(due, from: [.date(monday)], inclusive: true, to: [.date(nextMonday)], inclusive: false) {
            titles.append(row.string(title) ?? "")
        }

        #expect(titles == (24..<192).map { "chore \($0)" })

        var week: [String] = []
        snapshot.rows(due, from: [.date(monday)], inclusive: true, to: [.date(nextMonday)], inclusive: false).forEach { row in
            week.append(row.string(title) ?? "")
        }

        #expect(week == titles)

        let estimate = try store.schema.attribute("Chore", "estimate")
        var minutes = 0
        snapshot.rows(due, from: [.date(monday)], inclusive: true, to: [.date(nextMonday)], inclusive: false)
            .forEach(reading: [estimate]) { row in minutes += Int(row.int(estimate) ?? 0) }

        #expect(minutes == (24..<192).reduce(0) { $0 + $1 % 10 })
        let latest = snapshot.rows(due, reverse: true, limit: 3).map { $0.string(title) ?? "" }
        #expect(latest == ["chore 199", "chore 198", "chore 197"])
    }
}

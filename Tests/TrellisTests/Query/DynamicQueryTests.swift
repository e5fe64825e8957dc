import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// The name-based twin of `FetchDescriptor` finds the same objects, with the same indexes, for tools and migrations.
@Suite struct DynamicQueryTests {
    private func seeded() throws -> Store {
        let store = try makeStore()
        let context = ModelContext(store)
        let start = Date(timeIntervalSinceReferenceDate: 0)
        for name in ["Alpha", "Beta"] {
            let project = Project(name: name)
            for i in 0..<50 {
                context.insert(
                    Chore(
                        title: "\(name) \(i)", due: start.addingTimeInterval(Double(i * 3600)), estimate: i % 7,
                        done: i % 3 == 0, project: project))
            }
        }
        try context.save()
        return store
    }

    @Test func namesFindWhatKeyPathsFind() throws {
        let store = try seeded()
        let context = ModelContext(store)
        let deadline = Date(timeIntervalSinceReferenceDate: 20 * 3600)
        let typed = try context.fetchIdentifiers(
            FetchDescriptor<Chore>(
                predicate: #Predicate { !$0.done && $0.due < deadline && $0.project?.name == "Beta" },
                sortBy: [SortDescriptor(\.estimate, order: .reverse), SortDescriptor(\.title)]))
        let query = DynamicQuery(
            "Chore",
            where: .and([.equal("done", false), .less("due", .date(deadline)), .equal("project.name", "Beta")]),
            sortBy: [.init("estimate", ascending: false), .init("title")])
        #expect(try store.snapshot.fetch(query) == typed)
        #expect(try context.fetchIdentifiers(query) == typed)
        #expect(try store.snapshot.count(query) == typed.count)
        let plan = try store.snapshot.explain(query)
        #expect(plan.access == .indexRange && plan.index == ["due"])
    }

    @Test func listsNegationsLimitsAndPendingChanges() throws {
        let store = try seeded()
        let query = DynamicQuery(
            "Chore", where: .or([.among("estimate", [1, 2]), .not(.greaterOrEqual("estimate", 6))]),
            sortBy: [.init("title")], limit: 5, offset: 2)
        let all = try store.snapshot.fetch(DynamicQuery("Chore", where: query.condition, sortBy: query.sortBy))
        #expect(try store.snapshot.fetch(query) == Array(all[2..<7]))
        let context = ModelContext(store)
        context.insert(Chore(title: "AAA", estimate: 1))
        #expect(try context.fetchCount(DynamicQuery("Chore", where: .equal("title", "AAA"))) == 1)
        #expect(try store.snapshot.count(DynamicQuery("Chore", where: .equal("title", "AAA"))) == 0)
        let ins = DynamicQuery("Chore", where: .among("estimate", [0, 3]))
        #expect(try store.snapshot.explain(ins).access == .indexIn)
    }

    @Test func badNamesAndValuesAreReported() throws {
        let store = try seeded()
        let missing = #expect(throws: TrellisError.self) {
            try store.snapshot.fetch(DynamicQuery("Chore", where: .equal("colour", "red")))
        }
        #expect(missing?.code == .unknownAttribute)
        let wrongType = #expect(throws: TrellisError.self) {
            try store.snapshot.fetch(DynamicQuery("Chore", where: .equal("estimate", "many")))
        }
        #expect(wrongType?.code == .typeMismatch)
        let toMany = #expect(throws: TrellisError.self) {
            try store.snapshot.fetch(DynamicQuery("Project", where: .equal("chores.title", "x")))
        }
        #expect(toMany?.code == .invalidArgument)
        #expect(throws: TrellisError.self) { try store.snapshot.fetch(DynamicQuery("Nothing")) }
    }
}

import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Issue 5's "must show" 7: batch update and delete change only what the predicate selects, apply delete rules, are
/// one commit each, and the view context follows them.
@MainActor @Suite struct BatchOperationTests {
    /// Projects A, B, C with chores estimated 0...9 each.
    private func seeded() throws -> (Store, [String: ObjectID]) {
        let store = try makeStore()
        let context = ModelContext(store)
        var projects: [String: ObjectID] = [:]
        for name in ["A", "B", "C"] {
            let project = Project(name: name)
            for e in 0..<10 { context.insert(Chore(title: "\(name)\(e)", estimate: e, project: project)) }
            projects[name] = project.objectID!
        }
        try context.save()
        return (store, projects)
    }

    private func rows(_ store: Store) throws -> [ObjectID: [String: Value]] {
        let snapshot = store.snapshot
        return Dictionary(uniqueKeysWithValues: try snapshot.objectIDs("Chore").map { ($0, snapshot.values($0)!) })
    }

    @Test func batchUpdateChangesOnlyWhatThePredicateSelectsInOneCommit() async throws {
        let (store, _) = try seeded()
        let view = store.viewContext
        var reports = view.changes().makeAsyncIterator()
        let before = try rows(store)
        let sequence = store.snapshot.sequence
        let result = try store.batchUpdate(
            Chore.self, where: #Predicate { $0.estimate >= 5 && $0.project?.name == "B" },
            set: [BatchAssignment(\.done, true), BatchAssignment(\.note, "batched")])
        #expect(result.sequence == sequence + 1 && store.snapshot.sequence == sequence + 1)
        #expect(result.objects.count == 5)
        let after = try rows(store)
        for (id, row) in after {
            if result.objects.contains(id) {
                #expect(row["done"] == true && row["note"] == "batched" && row["title"]!.stringValue!.hasPrefix("B"))
                #expect(row["estimate"]!.intValue! >= 5)
            } else {
                #expect(row == before[id])
            }
        }
        let report = try #require(await reports.next())
        #expect(Set(report.updated.keys) == Set(result.objects))
        #expect(report.updated.values.allSatisfy { $0 == ["done", "note"] })
        #expect(try view.fetchCount(FetchDescriptor<Chore>(predicate: #Predicate { $0.done })) == 5)
    }

    @Test func batchDeleteAppliesDeleteRulesAndTheViewFollows() async throws {
        let (store, projects) = try seeded()
        let view = store.viewContext
        var reports = view.changes().makeAsyncIterator()
        let doomedChores = try store.snapshot.targets(projects["A"]!, "chores")
        let result = try store.batchDelete(Project.self, where: #Predicate { $0.name == "A" })
        #expect(result.objects == [projects["A"]!])
        let report = try #require(await reports.next())
        #expect(report.deleted == Set(doomedChores + [projects["A"]!]))  // cascade
        #expect(try view.fetchCount(FetchDescriptor<Chore>()) == 20)
        #expect(try view.fetch(FetchDescriptor<Project>(sortBy: [SortDescriptor(\.name)])).map(\.name) == ["B", "C"])

        let zeros = try store.batchDelete(Chore.self, where: #Predicate { $0.estimate == 0 })
        #expect(zeros.objects.count == 2)
        let nullified = try #require(await reports.next())
        #expect(nullified.deleted == Set(zeros.objects))
        #expect(nullified.updated[projects["B"]!] == ["chores"] && nullified.updated[projects["C"]!] == ["chores"])
        let b = try #require(view.model(for: projects["B"]!, as: Project.self))
        #expect(b.chores.map(\.estimate) == Array(1..<10))
        #expect(try store.snapshot.count("Chore") == 18)
    }

    @Test func batchInsertMakesObjectsWithoutModelsInOneCommit() async throws {
        let (store, projects) = try seeded()
        let view = store.viewContext
        var reports = view.changes().makeAsyncIterator()
        let result = try store.batchInsert(Chore.self, count: 100) { i, row in
            row[\.title] = "bulk \(i)"
            row[\.estimate] = 100 + i
            row.setTarget(\.project, projects["C"]!)
        }
        #expect(result.objects.count == 100)
        let report = try #require(await reports.next())
        #expect(report.inserted == Set(result.objects))
        #expect(report.updated[projects["C"]!] == ["chores"])
        let bulk = try view.fetch(
            FetchDescriptor<Chore>(predicate: #Predicate { $0.estimate >= 100 }, sortBy: [SortDescriptor(\.estimate)]))
        #expect(bulk.map(\.title) == (0..<100).map { "bulk \($0)" })
        #expect(bulk.allSatisfy { $0.project?.name == "C" && $0.due == .distantFuture })
    }
}

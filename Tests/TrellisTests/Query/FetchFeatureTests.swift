import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Fetch variants beyond plain object fetches: lazy batches, IDs, property dictionaries, grouped aggregates,
/// relationship paths in predicates, fallback sorts, and reading without pending changes.
@Suite struct FetchFeatureTests {
    /// Projects "Alpha" and "Beta" with four chores each (estimates 1...4, every other one done).
    private func seeded() throws -> (Store, ModelContext) {
        let store = try makeStore()
        let context = ModelContext(store)
        for name in ["Alpha", "Beta"] {
            let project = Project(name: name)
            for e in 1...4 {
                context.insert(Chore(title: "\(name) \(e)", estimate: e, done: e % 2 == 0, project: project))
            }
        }
        context.insert(Chore(title: "orphan", estimate: 10))
        try context.save()
        return (store, ModelContext(store))
    }

    @Test func batchedResultsMakeObjectsOnlyWhenRead() throws {
        let (_, context) = try seeded()
        let results = try context.fetch(FetchDescriptor<Chore>(sortBy: [SortDescriptor(\.title)]), batchSize: 4)
        #expect(results.count == 9 && results.materializedBatches == 0)
        #expect(results[5].title == "Beta 2")
        #expect(results.materializedBatches == 1)
        #expect(results[4] === results[4] && results[4] === context.model(for: results.identifiers[4], as: Chore.self))
        #expect(results.map(\.title).last == "orphan")
        #expect(results.materializedBatches == 3)
    }

    @Test func propertyDictionariesAndGroupedAggregates() throws {
        let (_, context) = try seeded()
        let rows = try context.fetchProperties(
            FetchDescriptor<Chore>(predicate: #Predicate { $0.estimate > 3 }, sortBy: [SortDescriptor(\.title)]),
            [\.title, \.estimate])
        #expect(
            rows == [
                ["title": "Alpha 4", "estimate": 4], ["title": "Beta 4", "estimate": 4],
                ["title": "orphan", "estimate": 10],
            ])
        let groups = try context.aggregate(
            FetchDescriptor<Chore>(),
            [.count, .sum(\.estimate), .average(\.estimate), .min(\.title), .max(\.estimate)],
            groupBy: [\.done])
        #expect(groups.map { $0.group["done"] } == [false, true])
        #expect(groups[0]["count"] == 5 && groups[0]["sum(estimate)"] == 18 && groups[0]["min(title)"] == "Alpha 1")
        #expect(groups[1]["count"] == 4 && groups[1]["average(estimate)"] == 3.0 && groups[1]["max(estimate)"] == 4)
        #expect(throws: TrellisError.self) { try context.fetchProperties(FetchDescriptor<Chore>(), [\.project]) }
    }

    @Test func relationshipPathsInPredicatesSeePendingChanges() throws {
        let (_, context) = try seeded()
        let inBeta = FetchDescriptor<Chore>(predicate: #Predicate { $0.project?.name == "Beta" })
        #expect(try context.fetchCount(inBeta) == 4)
        let beta = try context.fetch(FetchDescriptor<Project>(predicate: #Predicate { $0.name == "Beta" }))[0]
        beta.name = "Gamma"  // pending: the chores are untouched, their project is not
        #expect(try context.fetchCount(inBeta) == 0)
        let orphan = try context.fetch(FetchDescriptor<Chore>(predicate: #Predicate { $0.project == nil }))
        #expect(orphan.map(\.title) == ["orphan"])
        let betaID = beta.objectID
        let byID = FetchDescriptor<Chore>(predicate: #Predicate { $0.project?.objectID == betaID })
        #expect(try context.fetchCount(byID) == 4)
        let busy = FetchDescriptor<Project>(predicate: #Predicate { $0.chores.count > 3 })
        #expect(try context.fetch(busy).count == 2)
        let someDone = FetchDescriptor<Project>(
            predicate: #Predicate { $0.chores.contains { $0.done && $0.estimate > 3 } })
        #expect(try context.fetch(someDone).count == 2)
        let allSmall = FetchDescriptor<Project>(predicate: #Predicate { $0.chores.allSatisfy { $0.estimate < 4 } })
        #expect(try context.fetch(allSmall).isEmpty)
        #expect(try !context.explain(someDone).evaluatesOnObjects)
    }

    @Test func sortsTheCompilerCannotReadAreDoneByFoundation() throws {
        let (_, context) = try seeded()
        let descriptor = FetchDescriptor<Chore>(
            predicate: #Predicate { $0.project != nil },
            sortBy: [SortDescriptor(\.project?.name, order: .reverse), SortDescriptor(\.estimate)], fetchLimit: 3)
        #expect(try context.explain(descriptor).evaluatesOnObjects)
        #expect(try context.fetch(descriptor).map(\.title) == ["Beta 1", "Beta 2", "Beta 3"])
    }

    @Test func pendingChangesCanBeLeftOut() throws {
        let (_, context) = try seeded()
        context.insert(Chore(title: "pending"))
        context.delete(try context.fetch(FetchDescriptor<Chore>(predicate: #Predicate { $0.title == "orphan" }))[0])
        var descriptor = FetchDescriptor<Chore>(predicate: #Predicate { $0.estimate >= 0 })
        #expect(try context.fetchCount(descriptor) == 9)
        descriptor.includePendingChanges = false
        #expect(try context.fetchCount(descriptor) == 9)
        #expect(try context.fetch(descriptor).map(\.title).contains("orphan"))
        #expect(try !context.fetch(descriptor).map(\.title).contains("pending"))
    }

    @Test func contextDeleteByPredicateIsPendingUntilSave() throws {
        let (store, context) = try seeded()
        try context.delete(model: Chore.self, where: #Predicate { $0.done })
        #expect(try context.fetchCount(FetchDescriptor<Chore>()) == 5)
        #expect(try store.snapshot.count("Chore") == 9)
        try context.save()
        #expect(try store.snapshot.count("Chore") == 5)
    }
}

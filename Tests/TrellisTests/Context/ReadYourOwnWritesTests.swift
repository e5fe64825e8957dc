import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Invariant 10 and issue 5's "must show" 2: a context's fetches, counts and aggregates see its pending inserts and
/// updates and never its pending deletes, with sort, offset and limit applied after the merge.
@Suite struct ReadYourOwnWritesTests {
    /// A store with chores estimated 0...19, saved; returns it and the IDs by estimate.
    private func seeded() throws -> (Store, [ObjectID]) {
        let store = try makeStore()
        let context = ModelContext(store)
        let chores = (0..<20).map { Chore(title: "saved \($0)", estimate: $0) }
        for chore in chores { context.insert(chore) }
        try context.save()
        return (store, chores.map { $0.objectID! })
    }

    @Test func deletedButUnsavedObjectsNeverAppearInFetchesCountsOrAggregates() throws {
        let (store, ids) = try seeded()
        let context = ModelContext(store)
        for n in [3, 7, 15] { context.delete(context.model(for: ids[n], as: Chore.self)!) }
        let all = FetchDescriptor<Chore>()
        #expect(try context.fetchCount(all) == 17)
        #expect(try context.fetchIdentifiers(all).count == 17)
        let indexed = FetchDescriptor<Chore>(predicate: #Predicate { $0.estimate >= 3 && $0.estimate <= 7 })
        #expect(try context.explain(indexed).index == ["estimate"])
        #expect(try context.fetch(indexed).map(\.estimate) == [4, 5, 6])
        #expect(try context.fetchCount(indexed) == 3)
        let scanned = FetchDescriptor<Chore>(predicate: #Predicate { $0.title.contains("saved") })
        #expect(try context.fetchCount(scanned) == 17)
        let sums = try context.aggregate(all, [.count, .sum(\.estimate), .max(\.estimate)])
        #expect(sums == [AggregateRow(group: [:], values: ["count": 17, "sum(estimate)": 165, "max(estimate)": 19])])
        let byValue = FetchDescriptor<Chore>(predicate: #Predicate { $0.estimate == 15 })
        #expect(try context.fetch(byValue).isEmpty)
        #expect(try context.fetchCount(byValue) == 0)
        // Another context, and the store, still see them until the save.
        #expect(try ModelContext(store).fetchCount(all) == 20)
        try context.save()
        #expect(try ModelContext(store).fetchCount(all) == 17)
    }

    @Test func cascadeReachedObjectsAreHiddenAtOnce() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        let launch = Project(name: "Launch")
        for i in 0..<5 { context.insert(Chore(title: "step \(i)", project: launch)) }
        context.insert(Chore(title: "loose"))
        try context.save()
        context.delete(launch)
        #expect(try context.fetch(FetchDescriptor<Chore>()).map(\.title) == ["loose"])
        #expect(try context.fetchCount(FetchDescriptor<Project>()) == 0)
        #expect(try ModelContext(store).fetchCount(FetchDescriptor<Chore>()) == 6)
    }

    @Test func insertedButUnsavedObjectsAppearInSortOrderWithOffsetAndLimit() throws {
        let (store, ids) = try seeded()
        let context = ModelContext(store)
        let first = Chore(title: "new first", estimate: -1)
        let tie = Chore(title: "new tie", estimate: 5)
        let last = Chore(title: "new last", estimate: 100)
        for chore in [last, tie, first] { context.insert(chore) }
        context.model(for: ids[10], as: Chore.self)!.estimate = 25  // an update moves a saved object
        context.delete(context.model(for: ids[2], as: Chore.self)!)
        // Expected order: by estimate, ties by ObjectID (the new object's ID is higher than every saved one).
        let expected =
            [-1, 0, 1, 3, 4, 5, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19, 25, 100]
        let sorted = FetchDescriptor<Chore>(sortBy: [SortDescriptor(\.estimate)])
        #expect(try context.fetch(sorted).map(\.estimate) == expected)
        #expect(try context.fetch(sorted)[6] === tie)
        for (offset, limit) in [(0, 3), (4, 3), (5, 2), (19, 5), (21, 10), (30, 5)] {
            var window = sorted
            window.fetchOffset = offset
            window.fetchLimit = limit
            let slice = Array(expected.dropFirst(offset).prefix(limit))
            #expect(try context.fetch(window).map(\.estimate) == slice, "offset \(offset) limit \(limit)")
            #expect(try context.fetchCount(window) == slice.count)
        }
        var reversed = FetchDescriptor<Chore>(sortBy: [SortDescriptor(\.estimate, order: .reverse)])
        reversed.fetchLimit = 3
        #expect(try context.fetch(reversed).map(\.title) == ["new last", "saved 10", "saved 19"])
        #expect(try context.explain(reversed).access == .orderedIndexScan)
        let titled = FetchDescriptor<Chore>(
            predicate: #Predicate { $0.estimate > 4 && $0.estimate < 8 }, sortBy: [SortDescriptor(\.title)])
        #expect(try context.fetch(titled).map(\.title) == ["new tie", "saved 5", "saved 6", "saved 7"])
        let sums = try context.aggregate(FetchDescriptor<Chore>(), [.count, .sum(\.estimate), .min(\.estimate)])
        #expect(sums[0]["count"] == 22 && sums[0]["sum(estimate)"] == .int(Int64(expected.reduce(0, +))))
        #expect(sums[0]["min(estimate)"] == -1)
    }

    @Test func childContextsSeeTheirParentsPendingChangesAndTheirOwn() throws {
        let (store, ids) = try seeded()
        let parent = ModelContext(store)
        parent.insert(Chore(title: "parent's", estimate: 50))
        parent.delete(parent.model(for: ids[0], as: Chore.self)!)
        let child = ModelContext(parent: parent)
        child.insert(Chore(title: "child's", estimate: 60))
        child.model(for: ids[1], as: Chore.self)!.estimate = 70
        let top = FetchDescriptor<Chore>(
            predicate: #Predicate { $0.estimate >= 19 }, sortBy: [SortDescriptor(\.estimate)])
        #expect(try child.fetch(top).map(\.title) == ["saved 19", "parent's", "child's", "saved 1"])
        #expect(try parent.fetch(top).map(\.title) == ["saved 19", "parent's"])
        #expect(try child.fetchCount(FetchDescriptor<Chore>()) == 21)
    }
}

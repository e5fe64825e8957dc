import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Issue 5's "must show" 4: two contexts edit the same object; each merge policy gives its documented result.
@Suite struct MergePolicyTests {
    /// A saved chore (title "start", estimate 1, not done), a context `mine` that read it, and a commit by another
    /// context since: title "theirs", estimate 2. `mine` then sets title "mine" and done.
    private func conflicted(
        _ policy: MergePolicy
    ) throws -> (store: Store, mine: ModelContext, id: ObjectID, extra: ObjectID) {
        let store = try makeStore()
        let setup = ModelContext(store)
        let chore = Chore(title: "start", estimate: 1)
        setup.insert(chore)
        try setup.save()
        let id = chore.objectID!
        let mine = ModelContext(store)
        mine.mergePolicy = policy
        let mineChore = try #require(mine.model(for: id, as: Chore.self))
        #expect(mineChore.title == "start")
        let theirs = ModelContext(store)
        let theirChore = try #require(theirs.model(for: id, as: Chore.self))
        theirChore.title = "theirs"
        theirChore.estimate = 2
        try theirs.save()
        mineChore.title = "mine"
        mineChore.done = true
        let extra = Chore(title: "unrelated")
        mine.insert(extra)
        return (store, mine, id, extra.objectID!)
    }

    private func saved(_ store: Store, _ id: ObjectID) throws -> (String, Int, Bool) {
        let chore = try #require(ModelContext(store).model(for: id, as: Chore.self))
        return (chore.title, chore.estimate, chore.done)
    }

    @Test func errorPolicyThrowsListingTheConflictsAndSavesNothing() throws {
        let (store, mine, id, extra) = try conflicted(.error)
        let before = store.snapshot.sequence
        #expect(mine.conflicts().count == 1)
        let conflict = mine.conflicts()[0]
        #expect(conflict.object == id && conflict.kind == .updatedInStore)
        #expect(conflict.contextChanges == ["title", "done"] && conflict.storeChanges == ["title", "estimate"])
        let error = #expect(throws: TrellisError.self) { try mine.save() }
        #expect(error?.code == .conflict)
        #expect(error?.object == id)
        #expect(error?.message.contains("Chore#\(id.serial): this context changed title, done") == true)
        #expect(store.snapshot.sequence == before)
        #expect(!store.snapshot.contains(extra))
        #expect(mine.hasChanges)
        #expect(mine.model(for: id, as: Chore.self)!.title == "mine")
    }

    @Test func storeWinsDropsTheContextsChangesToConflictingObjectsOnly() throws {
        let (store, mine, id, extra) = try conflicted(.storeWins)
        try mine.save()
        #expect(try saved(store, id) == ("theirs", 2, false))
        #expect(store.snapshot.contains(extra))
        #expect(!mine.hasChanges)
        #expect(mine.model(for: id, as: Chore.self)!.title == "theirs")
    }

    @Test func contextWinsWritesTheContextsWholeVersion() throws {
        let (store, mine, id, extra) = try conflicted(.contextWins)
        try mine.save()
        #expect(try saved(store, id) == ("mine", 1, true))
        #expect(store.snapshot.contains(extra))
    }

    @Test func mergeByPropertyKeepsEachSidesOwnChangesAndFavorsOneSideOnBoth() throws {
        let (store, mine, id, _) = try conflicted(.mergeByProperty(favoring: .context))
        try mine.save()
        #expect(try saved(store, id) == ("mine", 2, true))
        let (store2, mine2, id2, _) = try conflicted(.mergeByProperty(favoring: .store))
        try mine2.save()
        #expect(try saved(store2, id2) == ("theirs", 2, true))
    }

    @Test func anObjectDeletedInTheStoreIsAConflictOrDropped() throws {
        for policy in [MergePolicy.error, .storeWins, .contextWins, .mergeByProperty(favoring: .context)] {
            let store = try makeStore()
            let setup = ModelContext(store)
            let chore = Chore(title: "start")
            setup.insert(chore)
            try setup.save()
            let mine = ModelContext(store)
            mine.mergePolicy = policy
            mine.model(for: chore.objectID!, as: Chore.self)!.title = "mine"
            setup.delete(chore)
            try setup.save()
            #expect(mine.conflicts().map(\.kind) == [.deletedInStore])
            if policy == .error {
                #expect(throws: TrellisError.self) { try mine.save() }
            } else {
                try mine.save()
                #expect(!store.snapshot.contains(chore.objectID!), "\(policy)")
            }
        }
    }

    @Test func aDeleteAgainstAnUpdateFollowsThePolicy() throws {
        let expectations: [(MergePolicy, survives: Bool)] = [
            (.storeWins, true), (.contextWins, false), (.mergeByProperty(favoring: .store), true),
            (.mergeByProperty(favoring: .context), false),
        ]
        for (policy, survives) in expectations {
            let store = try makeStore()
            let setup = ModelContext(store)
            let chore = Chore(title: "start")
            setup.insert(chore)
            try setup.save()
            let mine = ModelContext(store)
            mine.mergePolicy = policy
            mine.delete(mine.model(for: chore.objectID!, as: Chore.self)!)
            chore.title = "theirs"
            try setup.save()
            try mine.save()
            #expect(store.snapshot.contains(chore.objectID!) == survives, "\(policy)")
        }
    }

    @Test func toOneRelationshipsConflictLikeAttributes() throws {
        let store = try makeStore()
        let setup = ModelContext(store)
        let (a, b, c) = (Project(name: "A"), Project(name: "B"), Project(name: "C"))
        let chore = Chore(title: "move me", project: a)
        for object in [a, b, c, chore] as [Model] { setup.insert(object) }
        try setup.save()
        let mine = ModelContext(store)
        mine.model(for: chore.objectID!, as: Chore.self)!.project = mine.model(for: b.objectID!, as: Project.self)
        chore.project = c
        try setup.save()
        #expect(mine.conflicts().first?.contextChanges == ["project"])
        #expect(mine.conflicts().first?.storeChanges == ["project"])
        #expect(throws: TrellisError.self) { try mine.save() }
        mine.mergePolicy = .mergeByProperty(favoring: .context)
        try mine.save()
        let check = ModelContext(store)
        #expect(check.model(for: chore.objectID!, as: Chore.self)!.project?.name == "B")
        #expect(check.model(for: c.objectID!, as: Project.self)!.chores.isEmpty)
        #expect(check.model(for: b.objectID!, as: Project.self)!.chores.map(\.title) == ["move me"])
    }

    @Test func concurrentSavesOfDifferentObjectsAllSucceed() async throws {
        let store = try makeStore()
        let setup = ModelContext(store)
        let chores = (0..<8).map { Chore(title: "c\($0)") }
        for chore in chores { setup.insert(chore) }
        try setup.save()
        let ids = chores.map { $0.objectID! }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (n, id) in ids.enumerated() {
                group.addTask {
                    try await store.performBackgroundTask { context in
                        for round in 0..<20 {
                            context.model(for: id, as: Chore.self)!.estimate = n * 100 + round
                            try context.save()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let check = ModelContext(store)
        #expect(ids.enumerated().allSatisfy { check.model(for: $1, as: Chore.self)!.estimate == $0 * 100 + 19 })
    }
}

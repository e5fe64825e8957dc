import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Issue 5's "must show" 5: child contexts are scratchpads; save pushes into the parent, discard drops.
@Suite struct ChildContextTests {
    private func storeWithChore() throws -> (Store, ObjectID) {
        let store = try makeStore()
        let context = ModelContext(store)
        let chore = Chore(title: "saved", estimate: 1)
        context.insert(chore)
        try context.save()
        return (store, chore.objectID!)
    }

    @Test func childSavePushesIntoTheParentNotTheStore() throws {
        let (store, id) = try storeWithChore()
        let parent = ModelContext(store)
        let child = ModelContext(parent: parent)
        child.model(for: id, as: Chore.self)!.title = "edited in child"
        let added = Chore(title: "added in child")
        child.insert(added)
        #expect(parent.model(for: id, as: Chore.self)!.title == "saved")
        #expect(!parent.exists(added.objectID!))
        let sequence = store.snapshot.sequence
        try child.save()
        #expect(!child.hasChanges && parent.hasChanges)
        #expect(store.snapshot.sequence == sequence)
        #expect(parent.model(for: id, as: Chore.self)!.title == "edited in child")
        #expect(parent.model(for: added.objectID!, as: Chore.self)!.title == "added in child")
        #expect(child.model(for: id, as: Chore.self)!.title == "edited in child")
        try parent.save()
        #expect(try store.snapshot.value(id, "title") == "edited in child")
        #expect(store.snapshot.contains(added.objectID!))
    }

    @Test func discardingAChildDropsEverythingItDid() throws {
        let (store, id) = try storeWithChore()
        let parent = ModelContext(store)
        do {
            let child = ModelContext(parent: parent)
            child.model(for: id, as: Chore.self)!.title = "never"
            child.insert(Chore(title: "never either"))
            child.delete(child.model(for: id, as: Chore.self)!)
        }
        #expect(!parent.hasChanges)
        let child = ModelContext(parent: parent)
        child.model(for: id, as: Chore.self)!.estimate = 9
        child.rollback()
        #expect(!child.hasChanges)
        #expect(child.model(for: id, as: Chore.self)!.estimate == 1)
        try child.save()
        #expect(!parent.hasChanges)
        try parent.save()
        #expect(try ModelContext(store).fetchCount(FetchDescriptor<Chore>()) == 1)
    }

    @Test func aChildOfAChildSavesOneLevelAtATime() throws {
        let (store, id) = try storeWithChore()
        let root = ModelContext(store)
        let child = ModelContext(parent: root)
        let grandchild = ModelContext(parent: child)
        let launch = Project(name: "Launch")
        grandchild.insert(launch)
        grandchild.model(for: id, as: Chore.self)!.project = launch
        grandchild.model(for: id, as: Chore.self)!.estimate = 3
        try grandchild.save()
        #expect(child.hasChanges && !root.hasChanges)
        #expect(child.model(for: id, as: Chore.self)!.project?.name == "Launch")
        #expect(root.model(for: id, as: Chore.self)!.project == nil)
        try child.save()
        #expect(root.model(for: id, as: Chore.self)!.project?.name == "Launch")
        #expect(root.model(for: launch.objectID!, as: Project.self)!.chores.map(\.estimate) == [3])
        #expect(store.snapshot.objectCount == 1)
        try root.save()
        #expect(try store.snapshot.target(id, "project") == launch.objectID)
        #expect(try store.snapshot.value(id, "estimate") == 3)
    }

    @Test func deletesInAChildReachTheParentAndTheStore() throws {
        let store = try makeStore()
        let setup = ModelContext(store)
        let launch = Project(name: "Launch")
        for i in 0..<3 { setup.insert(Chore(title: "step \(i)", project: launch)) }
        try setup.save()
        let parent = ModelContext(store)
        let fresh = Chore(title: "parent's own")
        parent.insert(fresh)
        let child = ModelContext(parent: parent)
        child.delete(child.model(for: launch.objectID!, as: Project.self)!)
        child.delete(child.model(for: fresh.objectID!, as: Chore.self)!)
        #expect(try child.fetchCount(FetchDescriptor<Chore>()) == 0)
        #expect(try parent.fetchCount(FetchDescriptor<Chore>()) == 4)
        try child.save()
        #expect(try parent.fetchCount(FetchDescriptor<Chore>()) == 0)
        #expect(!parent.exists(fresh.objectID!))
        try parent.save()
        #expect(store.snapshot.objectCount == 0)
    }
}

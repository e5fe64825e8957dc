import Foundation
import Testing
import Trellis

/// An object inserted with a link and deleted before any save never reaches the store: the save that follows commits
/// the rest and reports no conflict (it threw "… was deleted in the store; this context changed …").
@Suite struct InsertThenDeleteBeforeSaveTests {
    @Test func anObjectLinkedToASavedOneAndDeletedBeforeSavingLeavesNoTraceAndNoConflict() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        let launch = Project(name: "Launch")
        context.insert(launch)
        try context.save()

        let draft = Chore(title: "draft", project: launch)
        context.insert(draft)
        let kept = Chore(title: "kept", project: launch)
        context.insert(kept)
        context.delete(draft)
        try context.save()

        #expect(try store.snapshot.count("Chore") == 1)
        let reread = ModelContext(store)
        let project = try #require(try reread.fetch(FetchDescriptor<Project>()).first)
        #expect(project.chores.map(\.title) == ["kept"])
    }

    @Test func aNewPairLinkedAndDeletedBeforeSavingLeavesNoTrace() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        let project = Project(name: "Scratch")
        let chore = Chore(title: "scratch", project: project)
        context.insert(chore)
        context.delete(project)  // cascades to its chores
        try context.save()
        #expect(try store.snapshot.count("Chore") == 0)
        #expect(try store.snapshot.count("Project") == 0)
        #expect(!context.hasChanges)
    }

    @Test func aNewObjectLinkedToANewTargetThenDeletedKeepsTheTarget() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        let project = Project(name: "Stays")
        let chore = Chore(title: "goes", project: project)
        context.insert(chore)
        context.delete(chore)
        try context.save()
        #expect(try store.snapshot.count("Chore") == 0)
        #expect(try store.snapshot.count("Project") == 1)
    }

    @Test func aChildsInsertThenDeleteReachesNeitherTheParentNorTheStore() throws {
        let store = try makeStore()
        let root = ModelContext(store)
        let launch = Project(name: "Launch")
        root.insert(launch)
        try root.save()
        let child = ModelContext(parent: root)
        let project = try #require(child.model(for: launch.objectID!, as: Project.self))
        let draft = Chore(title: "draft", project: project)
        child.insert(draft)
        child.delete(draft)
        try child.save()
        try root.save()
        #expect(try store.snapshot.count("Chore") == 0)
        #expect(launch.chores.isEmpty)
    }
}

import Foundation
import Testing
import Trellis

/// Issue 16, item 2: asking for an object as a model of the wrong entity killed the process ("Fatal error: … is a
/// Project, not a Chore"); it is nil, as for an object that is not there, whether or not the object was loaded.
@Suite struct WrongModelTypeTests {
    @Test func anObjectAskedForAsAnotherEntitysModelIsNil() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        let project = Project(name: "Launch")
        let chore = Chore(title: "Write", project: project)
        context.insert(chore)
        try context.save()
        let projectID = try #require(project.objectID)
        // Registered in this context already, and not yet in another one.
        #expect(context.model(for: projectID, as: Chore.self) == nil)
        let other = ModelContext(store)
        #expect(other.model(for: projectID, as: Chore.self) == nil)
        // The right type still works in both, and gives the same object each time in one context.
        #expect(context.model(for: projectID, as: Project.self) === project)
        let loaded = try #require(other.model(for: projectID, as: Project.self))
        #expect(loaded.name == "Launch")
        #expect(other.model(for: projectID, as: Project.self) === loaded)
        #expect(other.model(for: projectID, as: Chore.self) == nil)
    }
}

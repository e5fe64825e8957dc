import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

@Suite struct ModelSchemaTests {
    @Test func schemaIsDerivedFromWrappersInDeclarationOrder() throws {
        let schema = try Schema(models: [Project.self, Chore.self, Folder.self])
        let chore = schema.entities[1]
        #expect(chore.name == "Chore")
        #expect(chore.attributes.map(\.name) == ["title", "due", "done", "estimate", "note"])
        #expect(chore.attributes.map(\.type) == [.string, .date, .bool, .int, .string])
        #expect(chore.attributes.map(\.isOptional) == [false, false, false, false, true])
        #expect(chore.attributes[1].defaultValue == .date(.distantFuture))
        #expect(chore.indexes == [IndexDescription(["due"]), IndexDescription(["estimate"])])
        #expect(schema.entities[0].indexes == [IndexDescription(["name"], unique: true)])
        let chores = schema.entities[0].relationships[0]
        #expect(chores.name == "chores" && chores.target == "Chore" && chores.inverse == "project")
        #expect(chores.isToMany && chores.deleteRule == .cascade)
        let project = chore.relationships[0]
        #expect(project.inverse == "chores" && !project.isToMany && project.deleteRule == .nullify)
        let folder = schema.entities[2].relationships
        #expect(folder.map(\.name) == ["parent", "children"])
        #expect(folder.map(\.inverse) == ["children", "parent"])
    }

    @Test func unmanagedObjectsHoldTheirOwnValues() {
        let chore = Chore(title: "Plan", estimate: 3)
        #expect(chore.title == "Plan" && chore.estimate == 3 && chore.note == nil)
        chore.note = "soon"
        #expect(chore.note == "soon")
        #expect(chore.objectID == nil && chore.modelContext == nil)
    }

    @Test func insertGivesPermanentIDsAndReadsGoThroughTheContext() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        let launch = Project(name: "Launch")
        let chore = Chore(title: "Plan", project: launch)
        context.insert(chore)
        #expect(launch.objectID != nil && chore.objectID != nil)
        #expect(chore.project === launch)
        #expect(launch.chores == [chore])
        chore.title = "Plan it"
        #expect(chore.title == "Plan it")
        #expect(context.hasChanges)
        try context.save()
        #expect(!context.hasChanges)
        let snapshot = store.snapshot
        #expect(try snapshot.value(chore.objectID!, "title") == "Plan it")
        #expect(try snapshot.target(chore.objectID!, "project") == launch.objectID)
        let other = ModelContext(store)
        let again = try #require(other.model(for: chore.objectID!, as: Chore.self))
        #expect(again.title == "Plan it" && again.project?.name == "Launch")
        #expect(again.project === other.model(for: launch.objectID!, as: Project.self))
    }
}

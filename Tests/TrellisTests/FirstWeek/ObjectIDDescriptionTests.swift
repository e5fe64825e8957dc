import Foundation
import Testing
import Trellis

/// Issue 16, item 4: objects printed as `1#5`, the entity's number, wherever people saw them: a model object printed
/// as its class name only (`TrellisTests.Project`), and an ID had no way to print with its entity's name short of
/// `Schema.describe`. An ID alone knows only the number; with a schema at hand it prints `Entity#serial`.
@Suite struct ObjectIDDescriptionTests {
    @Test func anIDPrintsItsEntitysNameWithTheSchemaAndItsNumberWithout() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        let chore = Chore(title: "Write")
        context.insert(chore)
        try context.save()
        let id = try #require(chore.objectID)
        let number = try store.schema.entityNumber("Chore")
        #expect(id.description(in: store.schema) == "Chore#1")
        #expect(store.schema.describe(id) == "Chore#1")
        #expect("\(id)" == "\(number)#1", "without a schema the number is all an ID has")
        #expect(ObjectID(entity: 9, serial: 4).description(in: store.schema) == "entity9#4")
    }

    @Test func aModelObjectPrintsAsItsEntityAndSerial() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        let project = Project(name: "Launch")
        #expect(String(describing: project) == "Project (not inserted)")
        context.insert(project)
        #expect(String(describing: project) == "Project#1")
        try context.save()
        #expect("\(project)" == "Project#1")
        #expect(String(reflecting: project) == "Project#1")
        #expect(project.debugDescription == "Project#1")
        context.delete(project)
        #expect("\(project)" == "Project#1 (deleted)")
    }

    @Test func errorsAboutObjectsNameTheirEntities() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        context.insert(Project(name: "Launch"))
        try context.save()
        context.insert(Project(name: "Launch"))
        let error = try #require(throws: TrellisError.self) { try context.save() }
        #expect(
            error.message
                == "Project#2 breaks the unique constraint on Project(name): Project#1 already has name = \"Launch\"")
        #expect(error.uniqueViolation.map { $0.existing.description(in: store.schema) } == "Project#1")
    }
}

import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

enum Priority: Int, PersistentValue, Codable {
    case low, normal, high
}

final class Ticket: Model {
    @Attribute var code = ""
    @Attribute var area = ""
    @Attribute var priority = Priority.normal
    @Attribute var weight: Float = 0
    @Relationship var owner: Person?
    @Relationship var watchers: [Person]

    override class var indexes: [ModelIndex] { [.unique(\Ticket.area, \Ticket.code)] }
}

final class Person: Model {
    @Attribute var name = ""
}

class Stamped: Model {
    @Attribute var created = Date(timeIntervalSinceReferenceDate: 0)
}

final class Note: Stamped {
    @Attribute var text = ""
}

/// What the model layer derives and how typed objects behave beyond plain attributes.
@Suite struct ModelFeatureTests {
    @Test func relationshipsWithoutADeclaredInverseGetAHiddenOne() throws {
        let schema = try Schema(models: [Ticket.self, Person.self])
        let person = schema.entities[1]
        #expect(person.relationships.map(\.name) == ["Ticket.owner", "Ticket.watchers"])
        #expect(person.relationships.allSatisfy { $0.isToMany && $0.deleteRule == .nullify })
        #expect(schema.entities[0].indexes == [IndexDescription(["area", "code"], unique: true)])
        #expect(schema.entities[0].attributes[2].type == .int && schema.entities[0].attributes[3].type == .float)
    }

    @Test func inheritedPropertiesComeFirstAndWork() throws {
        let store = try Store(models: [Note.self])
        #expect(store.schema.entities[0].attributes.map(\.name) == ["created", "text"])
        let context = ModelContext(store)
        let note = Note()
        note.text = "hello"
        note.created = Date(timeIntervalSinceReferenceDate: 60)
        context.insert(note)
        try context.save()
        let later = Date(timeIntervalSinceReferenceDate: 30)
        let found = try ModelContext(store).fetch(FetchDescriptor<Note>(predicate: #Predicate { $0.created > later }))
        #expect(found.map(\.text) == ["hello"])
    }

    @Test func enumsAndFloatsRoundTripAndQuery() throws {
        let store = try Store(models: [Ticket.self, Person.self])
        let context = ModelContext(store)
        let ann = Person()
        ann.name = "Ann"
        for (n, priority) in [Priority.low, .high, .high].enumerated() {
            let ticket = Ticket()
            ticket.code = "T\(n)"
            ticket.priority = priority
            ticket.weight = 0.1
            ticket.owner = ann
            ticket.watchers = [ann]
            context.insert(ticket)
        }
        try context.save()
        let other = ModelContext(store)
        let wanted = Priority.high
        let high = try other.fetch(FetchDescriptor<Ticket>(predicate: #Predicate { $0.priority == wanted }))
        #expect(high.map(\.code) == ["T1", "T2"])
        #expect(high.allSatisfy { $0.weight == 0.1 && $0.owner?.name == "Ann" && $0.watchers.count == 1 })
        let light = Float(0.1)
        #expect(try other.fetchCount(FetchDescriptor<Ticket>(predicate: #Predicate { $0.weight == light })) == 3)
    }

    @Test func aCompoundUniqueConstraintIsCheckedAtSave() throws {
        let store = try Store(models: [Ticket.self, Person.self])
        let context = ModelContext(store)
        for area in ["ops", "ops"] {
            let ticket = Ticket()
            ticket.area = area
            ticket.code = "T1"
            context.insert(ticket)
        }
        let error = #expect(throws: TrellisError.self) { try context.save() }
        #expect(error?.code == .uniqueViolation)
        #expect(context.hasChanges)
    }

    @Test func rollbackDropsEveryPendingChange() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        let kept = Chore(title: "kept")
        context.insert(kept)
        try context.save()
        kept.title = "changed"
        let fresh = Chore(title: "fresh")
        context.insert(fresh)
        context.rollback()
        #expect(!context.hasChanges)
        #expect(kept.title == "kept")
        #expect(fresh.isDeleted && !kept.isDeleted)
        #expect(try context.fetch(FetchDescriptor<Chore>()).map(\.title) == ["kept"])
    }

    @Test func objectsAreUniquePerContextAndIDsCrossContexts() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        let launch = Project(name: "Launch")
        context.insert(launch)
        try context.save()
        let fetched = try context.fetch(FetchDescriptor<Project>())
        #expect(fetched.first === launch)
        let elsewhere = ModelContext(store)
        let copy = try #require(elsewhere.model(for: launch.objectID!, as: Project.self))
        #expect(copy !== launch && copy.name == "Launch" && copy.modelContext === elsewhere)
    }
}

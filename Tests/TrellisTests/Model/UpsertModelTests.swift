import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisStore

/// `ModelContext.save(onConflict:)`: an inserted model object whose unique values are taken either fails the save
/// (`.error`, what `save()` does) or becomes the object holding them (`.update`).
@Suite struct UpsertModelTests {
    @Test func singleConstraintAcrossSaves() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        let home = Project(name: "home")
        context.insert(home)
        try context.save()
        let homeID = try #require(home.objectID)

        let again = Project(name: "home")
        let chore = Chore(title: "sweep")
        context.insert(again)
        context.insert(chore)
        again.chores.append(chore)
        let error = #expect(throws: TrellisError.self) { try context.save() }
        #expect(error?.code == .uniqueViolation)
        #expect(context.hasChanges)
        try context.save(onConflict: .update)
        #expect(again.objectID == homeID)
        #expect(try context.fetchCount(FetchDescriptor<Project>()) == 1)
        #expect(home.chores.map(\.title) == ["sweep"])
        #expect(again.chores.map(\.title) == ["sweep"])
        #expect(chore.project === home)
        // Another context sees one project holding the chore.
        let other = try ModelContext(store).fetch(FetchDescriptor<Project>())
        #expect(other.map(\.name) == ["home"] && other[0].chores.map(\.title) == ["sweep"])
    }

    @Test func anInsertedObjectWithNoEarlierInstanceBecomesTheRegisteredOne() throws {
        let store = try makeStore()
        try store.write { tx in try tx.insert("Project", ["name": "work"]) }
        let context = ModelContext(store)
        let work = Project(name: "work")
        context.insert(work)
        try context.save(onConflict: .update)
        let id = try #require(work.objectID)
        #expect(try context.fetch(FetchDescriptor<Project>()).first === work)
        #expect(store.snapshot.contains(id))
    }

    @Test func compoundConstraintWithinOneSave() throws {
        let store = try Store(models: [Ticket.self, Person.self])
        let context = ModelContext(store)
        let low = Ticket()
        (low.area, low.code, low.priority) = ("ops", "T-1", .low)
        let high = Ticket()
        (high.area, high.code, high.priority) = ("ops", "T-1", .high)
        let elsewhere = Ticket()
        (elsewhere.area, elsewhere.code) = ("dev", "T-1")
        for ticket in [low, high, elsewhere] { context.insert(ticket) }
        let error = #expect(throws: TrellisError.self) { try context.save(onConflict: .error) }
        #expect(error?.message.contains("Ticket(area, code)") == true)
        try context.save(onConflict: .update)
        #expect(high.objectID == low.objectID && elsewhere.objectID != low.objectID)
        let stored = try ModelContext(store).fetch(FetchDescriptor<Ticket>(sortBy: [SortDescriptor(\.area)]))
        #expect(stored.map(\.area) == ["dev", "ops"])
        #expect(stored[1].priority == .high)
        #expect(low.priority == .high)
    }

    @Test func compoundConstraintAcrossSaves() throws {
        let store = try Store(models: [Ticket.self, Person.self])
        let first = ModelContext(store)
        let ticket = Ticket()
        (ticket.area, ticket.code, ticket.weight) = ("ops", "T-1", 1)
        first.insert(ticket)
        try first.save()
        let second = ModelContext(store)
        let update = Ticket()
        (update.area, update.code, update.weight) = ("ops", "T-1", 2)
        second.insert(update)
        try second.save(onConflict: .update)
        #expect(update.objectID == ticket.objectID)
        first.refresh()
        #expect(ticket.weight == 2)
        #expect(try first.fetchCount(FetchDescriptor<Ticket>()) == 1)
    }
}

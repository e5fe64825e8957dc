import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisStore

final class Crew: Model {
    @Attribute var name = ""
    @Relationship(minimumCount: 1, maximumCount: 3, inverse: \Sailor.crew) var sailors: [Sailor]
}

final class Sailor: Model {
    @Attribute var name = ""
    @Relationship var crew: Crew?
}

final class Berth: Model {
    @Attribute var number = 0
    @Relationship(minimumCount: 1) var sailor: Sailor?
}

/// `@Relationship(minimumCount:maximumCount:)`: the typed API's count bounds, checked by every save.
@Suite struct RelationshipCountModelTests {
    @discardableResult
    private func crew(_ context: ModelContext, _ size: Int) -> Crew {
        let crew = Crew()
        crew.name = "crew of \(size)"
        context.insert(crew)
        for i in 0..<size {
            let sailor = Sailor()
            sailor.name = "s\(i)"
            context.insert(sailor)
            crew.sailors.append(sailor)
        }
        return crew
    }

    @Test func theBoundsReachTheSchema() throws {
        let schema = try Schema(models: [Crew.self, Sailor.self, Berth.self])
        let sailors = try #require(schema.entities[0].relationships.first { $0.name == "sailors" })
        #expect(sailors.minCount == 1 && sailors.maxCount == 3)
        let crew = try #require(schema.entities[1].relationships.first { $0.name == "crew" })
        #expect(crew.minCount == 0 && crew.maxCount == 1)
        let berth = try #require(schema.entities[2].relationships.first { $0.name == "sailor" })
        #expect(berth.minCount == 1 && berth.maxCount == 1)
    }

    @Test func tooFewIsRefusedNamingTheRelationshipAndCounts() throws {
        let store = try Store(models: [Crew.self, Sailor.self, Berth.self])
        let context = ModelContext(store)
        let empty = crew(context, 0)
        let error = #expect(throws: TrellisError.self) { try context.save() }
        #expect(error?.code == .relationshipCount)
        #expect(error?.message.contains("'sailors'") == true)
        #expect(error?.message.contains("would have 0 target(s)") == true)
        #expect(error?.message.contains("1...3") == true)
        #expect(error?.object == empty.objectID)
        #expect(try ModelContext(store).fetchCount(FetchDescriptor<Crew>()) == 0)
        #expect(context.hasChanges)
    }

    @Test func tooManyIsRefusedAndTheBoundsHoldAcrossSaves() throws {
        let store = try Store(models: [Crew.self, Sailor.self, Berth.self])
        let context = ModelContext(store)
        _ = crew(context, 4)
        let error = #expect(throws: TrellisError.self) { try context.save() }
        #expect(error?.code == .relationshipCount)
        #expect(error?.message.contains("would have 4 target(s) in 'sailors'") == true)
        context.rollback()

        let three = crew(context, 3)
        try context.save()
        let extra = Sailor()
        context.insert(extra)
        three.sailors.append(extra)
        let over = #expect(throws: TrellisError.self) { try context.save() }
        #expect(over?.message.contains("would have 4 target(s) in 'sailors'") == true)
        context.rollback()
        three.sailors = []
        let under = #expect(throws: TrellisError.self) { try context.save() }
        #expect(under?.message.contains("would have 0 target(s) in 'sailors'") == true)
        context.rollback()
        three.sailors = Array(three.sailors.prefix(1))
        try context.save()
        #expect(try ModelContext(store).fetch(FetchDescriptor<Crew>())[0].sailors.count == 1)
    }

    @Test func aMinimumOfOneMakesAToOneRequired() throws {
        let store = try Store(models: [Crew.self, Sailor.self, Berth.self])
        let context = ModelContext(store)
        let berth = Berth()
        context.insert(berth)
        let error = #expect(throws: TrellisError.self) { try context.save() }
        #expect(error?.message.contains("would have 0 target(s) in 'sailor'; it must have 1...1") == true)
        let sailor = Sailor()
        context.insert(sailor)
        berth.sailor = sailor
        crew(context, 1).sailors.append(sailor)
        try context.save()
        #expect(berth.sailor === sailor)
    }
}

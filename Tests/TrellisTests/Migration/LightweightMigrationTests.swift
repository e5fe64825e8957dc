import Foundation
import Testing

@testable import Trellis

/// Each inferred (lightweight) step: a v1 store reopened with a v2 schema keeps its objects, values, relationships
/// and IDs, and the migration survives another reopen (it is in the journal, not only in memory).
@Suite struct LightweightMigrationTests {
    /// Seeds a v1 store, reopens it with `change(v1 entities)`, runs `check` on the migrated store and again after a
    /// plain reopen and after compaction.
    func migrate(
        _ change: (inout [EntityDescription]) -> Void, check: (Store, [ObjectID]) throws -> Void
    ) throws {
        let directory = MigrationFixtures.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let people: [ObjectID]
        do {
            let store = try Store(directory: directory, schema: try MigrationFixtures.v1())
            people = try MigrationFixtures.seed(store)
            try store.close()
        }
        var entities = MigrationFixtures.v1Entities
        change(&entities)
        let v2 = try Schema(entities)
        let migrated = try Store(directory: directory, schema: v2)
        #expect(migrated.schema.history.count == 1)
        try check(migrated, people)
        try migrated.close()
        let reopened = try Store(directory: directory, schema: v2)
        #expect(reopened.schema.history.count == 1)
        try check(reopened, people)
        try reopened.compact()
        try reopened.close()
        let compacted = try Store(directory: directory, schema: v2)
        #expect(compacted.schema.history.count == 1, "the history survives compaction")
        try check(compacted, people)
        try compacted.close()
    }

    @Test func addingAnAttributeFillsItsDefaultAndKeepsEveryValueAndID() throws {
        try migrate({ $0[1].attributes.append(AttributeDescription("score", .double, default: 1.5)) }) {
            (store: Store, people: [ObjectID]) throws in
            let s = store.snapshot
            #expect(try s.count("Person") == MigrationFixtures.people)
            for (i, id) in people.enumerated() {
                #expect(try s.value(id, "score") == .double(1.5))
                #expect(try s.value(id, "name") == .string("First\(i) Last\(i)"))
                #expect(try s.value(id, "age") == .int(Int64(20 + i % 40)))
            }
            #expect(try s.targets(people[4], "team").count == 1)
        }
    }

    @Test func addingAnOptionalAttributeWithoutDefaultFillsNull() throws {
        try migrate({ $0[1].attributes.append(AttributeDescription("email", .string, optional: true)) }) {
            (store: Store, people: [ObjectID]) throws in
            #expect(try store.snapshot.value(people[7], "email") == .null)
        }
    }

    @Test func removingAnAttributeDropsItsColumnOnly() throws {
        try migrate({ $0[1].attributes.removeAll { $0.name == "nickname" } }) {
            (store: Store, people: [ObjectID]) throws in
            let s = store.snapshot
            #expect(throws: TrellisError.self) { try s.value(people[1], "nickname") }
            #expect(try s.value(people[1], "name") == .string("First1 Last1"))
            #expect(try s.value(people[1], "age") == .int(21))
        }
    }

    @Test func renamingAnAttributeByItsOriginalNameKeepsItsValues() throws {
        try migrate({ $0[1].attributes[0] = AttributeDescription("fullName", .string, originalName: "name") }) {
            (store: Store, people: [ObjectID]) throws in
            let s = store.snapshot
            for (i, id) in people.enumerated() { #expect(try s.value(id, "fullName") == .string("First\(i) Last\(i)")) }
            #expect(
                store.schema.history.last?.steps.contains { $0.contains("rename attribute 'name' to 'fullName'") }
                    == true)
        }
    }

    @Test func renamingAnEntityKeepsItsObjectsIDsAndRelationships() throws {
        try migrate({ entities in
            entities[1].name = "Member"
            entities[1].originalName = "Person"
            entities[0].relationships[0].target = "Member"
        }) { (store: Store, people: [ObjectID]) throws in
            let s = store.snapshot
            #expect(try s.count("Member") == MigrationFixtures.people)
            #expect(try s.schema.entityNumber("Member") == people[0].entity)
            #expect(try s.value(people[9], "name") == .string("First9 Last9"))
            let team = try s.targets(people[9], "team")
            #expect(team.count == 1)
            #expect(try s.targets(team[0], "members").contains(people[9]))
        }
    }

    @Test func addingAnEntityAndARelationshipStartsThemEmpty() throws {
        try migrate({ entities in
            entities.append(
                EntityDescription(
                    "Badge", attributes: [AttributeDescription("label", .string)],
                    relationships: [RelationshipDescription("holders", to: "Person", inverse: "badges", toMany: true)]))
            entities[1].relationships.append(
                RelationshipDescription("badges", to: "Badge", inverse: "holders", toMany: true))
        }) { (store: Store, people: [ObjectID]) throws in
            let s = store.snapshot
            #expect(try s.count("Badge") == 0)
            #expect(try s.targets(people[3], "badges").isEmpty)
            #expect(try s.targets(people[3], "team").count == 1)
            // The new entity takes a number after the stored ones, so stored IDs keep theirs.
            #expect(try s.schema.entityNumber("Badge") == 2)
        }
    }

    @Test func removingAnEntityRemovesItsObjectsAndTheInverseRelationship() throws {
        try migrate({ entities in
            entities.removeAll { $0.name == "Team" }
            entities[0].relationships.removeAll()
        }) { (store: Store, people: [ObjectID]) throws in
            let s = store.snapshot
            #expect(throws: TrellisError.self) { try s.count("Team") }
            #expect(try s.count("Person") == MigrationFixtures.people)
            // Team stays as a retired placeholder: Person keeps its number, so every ID stays valid.
            #expect(try s.schema.entityNumber("Person") == people[2].entity)
            #expect(s.schema.entities[0].isRetired)
            #expect(try s.value(people[2], "name") == .string("First2 Last2"))
        }
    }

    @Test func aRemovedEntitysNumberAndSerialsAreNeverGivenOutAgain() throws {
        let directory = MigrationFixtures.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(directory: directory, schema: try MigrationFixtures.v1())
        try MigrationFixtures.seed(store)
        try store.close()
        var entities = MigrationFixtures.v1Entities
        entities.removeAll { $0.name == "Team" }
        entities[0].relationships.removeAll()
        entities.append(EntityDescription("Label", attributes: [AttributeDescription("text", .string)]))
        let v2 = try Store(directory: directory, schema: Schema(entities))
        #expect(try v2.schema.entityNumber("Label") == 2, "a new entity does not take the removed one's number")
        var tx = v2.transaction()
        #expect(throws: TrellisError.self) { try tx.insert("Team", ["title": "x"]) }
        try v2.close()
        // Declaring Team again brings it back empty, in its old place, with serials above its old ones.
        var v3 = entities
        v3.append(EntityDescription("Team", attributes: [AttributeDescription("title", .string)]))
        let store3 = try Store(directory: directory, schema: Schema(v3))
        #expect(try store3.schema.entityNumber("Team") == 0)
        #expect(try store3.snapshot.count("Team") == 0)
        let team = try store3.write { tx in try tx.insert("Team", ["title": "again"]) }
        #expect(team.serial == UInt64(MigrationFixtures.teams) + 1)
        try store3.close()
    }

    @Test func renamingARelationshipKeepsItsTargets() throws {
        try migrate({ entities in
            entities[1].relationships[0] = RelationshipDescription(
                "squad", to: "Team", inverse: "members", originalName: "team")
            entities[0].relationships[0].inverse = "squad"
        }) { (store: Store, people: [ObjectID]) throws in
            let s = store.snapshot
            #expect(try s.targets(people[5], "squad").count == 1)
            let team = try s.targets(people[5], "squad")[0]
            #expect(try s.value(team, "title") == .string("team 2"))
        }
    }

    @Test func optionalityChangesFillNullsWithTheDefault() throws {
        try migrate({ entities in
            entities[1].attributes[2] = AttributeDescription("nickname", .string, default: "none")
            entities[1].attributes[1].isOptional = true
        }) { (store: Store, people: [ObjectID]) throws in
            let s = store.snapshot
            #expect(try s.value(people[0], "nickname") == .string("none"))
            #expect(try s.value(people[1], "nickname") == .string("nick1"))
            #expect(try s.value(people[1], "age") == .int(21))
        }
    }

    @Test func wideningNumbersKeepsTheirValues() throws {
        try migrate({ entities in
            entities[1].attributes[1].type = .int64
            entities[1].attributes.append(AttributeDescription("level", .int, default: 3))
        }) { (store: Store, people: [ObjectID]) throws in
            #expect(try store.snapshot.value(people[10], "age") == .int(30))
        }
        try migrate({ entities in entities[1].attributes[1].type = .double }) {
            (store: Store, people: [ObjectID]) throws in
            #expect(try store.snapshot.value(people[10], "age") == .double(30))
            let plan = try store.snapshot.explain(
                DynamicQuery("Person", where: .greater("age", .double(50)), sortBy: [.init("age")]))
            #expect(plan.candidates >= 0)
        }
    }

    @Test func deleteRulesAndCountsTheDataMeetsChangeInPlace() throws {
        try migrate({ entities in
            entities[0].relationships[0].deleteRule = .cascade
            entities[1].relationships[0].minCount = 1
        }) { (store: Store, people: [ObjectID]) throws in
            // The first pass deletes a team; the reopens see that commit too.
            if try store.snapshot.count("Team") == MigrationFixtures.teams {
                let team = try store.snapshot.targets(people[0], "team")[0]
                try store.write { tx in try tx.delete(team) }
            }
            #expect(try store.snapshot.count("Team") == MigrationFixtures.teams - 1)
            #expect(try store.snapshot.count("Person") == MigrationFixtures.people - MigrationFixtures.people / 3)
            #expect(!store.snapshot.contains(people[0]))
            #expect(store.snapshot.contains(people[1]))
        }
    }

    @Test func anAddedIndexIsUsedByQueries() throws {
        try migrate({ entities in
            entities[1].indexes.append(.on("age"))
            entities[1].indexes.append(.unique("name"))
            entities[0].indexes.removeAll()
        }) { (store: Store, people: [ObjectID]) throws in
            let s = store.snapshot
            let query = DynamicQuery("Person", where: .equal("age", .int(25)))
            #expect(try s.explain(query).index == ["age"])
            #expect(
                try s.fetch(query).count == MigrationFixtures.people / 40 + (5 < MigrationFixtures.people % 40 ? 1 : 0))
            #expect(try s.fetch(query).allSatisfy { try s.value($0, "age") == .int(25) })
            #expect(
                try s.explain(DynamicQuery("Person", where: .equal("name", "First3 Last3"))).access == .uniqueLookup)
            #expect(try s.fetch(DynamicQuery("Person", where: .equal("name", "First3 Last3"))) == [people[3]])
            #expect(try s.explain(DynamicQuery("Team", where: .equal("title", "team 1"))).index == nil)
        }
    }
}

import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Each inferred (lightweight) step as data: how version 2 changes the fixtures' v1 entities, and what must hold in a
/// store migrated to it (`people`: the seeded people's IDs in order). `LightweightMigrationTests` runs each in one
/// process; `MigrationCrossProcessTests` seeds in a child process and reads the result in another.
struct LightweightCase: Sendable, CustomTestStringConvertible {
    var name: String
    var change: @Sendable (inout [EntityDescription]) -> Void
    var check: @Sendable (_ store: Store, _ people: [ObjectID]) throws -> Void

    init(
        name: String, change: @escaping @Sendable (inout [EntityDescription]) -> Void,
        check: @escaping @Sendable (_ store: Store, _ people: [ObjectID]) throws -> Void
    ) {
        (self.name, self.change, self.check) = (name, change, check)
    }

    var testDescription: String { name }

    /// The v2 schema: the v1 entities with `change` applied.
    func v2() throws -> Schema {
        var entities = MigrationFixtures.v1Entities
        change(&entities)
        return try Schema(entities)
    }

    static let all: [LightweightCase] = [
        addAttribute, addOptionalAttribute, removeAttribute, renameAttribute, renameEntity, addEntityAndRelationship,
        removeEntity, renameRelationship, optionality, widenToInt64, widenToDouble, deleteRuleAndCounts, addIndex,
    ]

    static let addAttribute = LightweightCase(name: "add an attribute with a default") {
        $0[1].attributes.append(AttributeDescription("score", .double, default: 1.5))
    } check: { (store, people) throws in
        let s = store.snapshot
        #expect(try s.count("Person") == MigrationFixtures.people)
        for (i, id) in people.enumerated() {
            #expect(try s.value(id, "score") == .double(1.5))
            #expect(try s.value(id, "name") == .string("First\(i) Last\(i)"))
            #expect(try s.value(id, "age") == .int(Int64(20 + i % 40)))
        }
        #expect(try s.targets(people[4], "team").count == 1)
    }

    static let addOptionalAttribute = LightweightCase(name: "add an optional attribute without a default") {
        $0[1].attributes.append(AttributeDescription("email", .string, optional: true))
    } check: { (store, people) throws in
        #expect(try store.snapshot.value(people[7], "email") == .null)
        #expect(try store.snapshot.value(people[7], "nickname") == .string("nick7"))
    }

    static let removeAttribute = LightweightCase(name: "remove an attribute") {
        $0[1].attributes.removeAll { $0.name == "nickname" }
    } check: { (store, people) throws in
        let s = store.snapshot
        #expect(throws: TrellisError.self) { try s.value(people[1], "nickname") }
        #expect(try s.value(people[1], "name") == .string("First1 Last1"))
        #expect(try s.value(people[1], "age") == .int(21))
    }

    static let renameAttribute = LightweightCase(name: "rename an attribute") {
        $0[1].attributes[0] = AttributeDescription("fullName", .string, originalName: "name")
    } check: { (store, people) throws in
        let s = store.snapshot
        for (i, id) in people.enumerated() { #expect(try s.value(id, "fullName") == .string("First\(i) Last\(i)")) }
        #expect(
            store.schema.history.last?.steps.contains { $0.contains("rename attribute 'name' to 'fullName'") } == true)
    }

    static let renameEntity = LightweightCase(name: "rename an entity") { entities in
        entities[1].name = "Member"
        entities[1].originalName = "Person"
        entities[0].relationships[0].target = "Member"
    } check: { (store, people) throws in
        let s = store.snapshot
        #expect(try s.count("Member") == MigrationFixtures.people)
        #expect(try s.schema.entityNumber("Member") == people[0].entity)
        #expect(try s.value(people[9], "name") == .string("First9 Last9"))
        let team = try s.targets(people[9], "team")
        #expect(team.count == 1)
        #expect(try s.targets(team[0], "members").contains(people[9]))
    }

    static let addEntityAndRelationship = LightweightCase(name: "add an entity and a relationship") { entities in
        entities.append(
            EntityDescription(
                "Badge", attributes: [AttributeDescription("label", .string)],
                relationships: [RelationshipDescription("holders", to: "Person", inverse: "badges", toMany: true)]))
        entities[1].relationships.append(
            RelationshipDescription("badges", to: "Badge", inverse: "holders", toMany: true))
    } check: { (store, people) throws in
        let s = store.snapshot
        #expect(try s.count("Badge") == 0)
        #expect(try s.targets(people[3], "badges").isEmpty)
        #expect(try s.targets(people[3], "team").count == 1)
        // The new entity takes a number after the stored ones, so stored IDs keep theirs.
        #expect(try s.schema.entityNumber("Badge") == 2)
    }

    static let removeEntity = LightweightCase(name: "remove an entity") { entities in
        entities.removeAll { $0.name == "Team" }
        entities[0].relationships.removeAll()
    } check: { (store, people) throws in
        let s = store.snapshot
        #expect(throws: TrellisError.self) { try s.count("Team") }
        #expect(try s.count("Person") == MigrationFixtures.people)
        // Team stays as a retired placeholder: Person keeps its number, so every ID stays valid.
        #expect(try s.schema.entityNumber("Person") == people[2].entity)
        #expect(s.schema.entities[0].isRetired)
        #expect(try s.value(people[2], "name") == .string("First2 Last2"))
    }

    static let renameRelationship = LightweightCase(name: "rename a relationship") { entities in
        entities[1].relationships[0] = RelationshipDescription(
            "squad", to: "Team", inverse: "members", originalName: "team")
        entities[0].relationships[0].inverse = "squad"
    } check: { (store, people) throws in
        let s = store.snapshot
        #expect(try s.targets(people[5], "squad").count == 1)
        let team = try s.targets(people[5], "squad")[0]
        #expect(try s.value(team, "title") == .string("team 2"))
    }

    static let optionality = LightweightCase(name: "optional to required with a default, required to optional") {
        entities in
        entities[1].attributes[2] = AttributeDescription("nickname", .string, default: "none")
        entities[1].attributes[1].isOptional = true
    } check: { (store, people) throws in
        let s = store.snapshot
        #expect(try s.value(people[0], "nickname") == .string("none"))
        #expect(try s.value(people[1], "nickname") == .string("nick1"))
        #expect(try s.value(people[1], "age") == .int(21))
    }

    static let widenToInt64 = LightweightCase(name: "widen Int32 to Int64") { entities in
        entities[1].attributes[1].type = .int64
        entities[1].attributes.append(AttributeDescription("level", .int, default: 3))
    } check: { (store, people) throws in
        #expect(try store.snapshot.value(people[10], "age") == .int(30))
        #expect(try store.snapshot.value(people[10], "level") == .int(3))
    }

    static let widenToDouble = LightweightCase(name: "widen Int32 to Double") { entities in
        entities[1].attributes[1].type = .double
    } check: { (store, people) throws in
        #expect(try store.snapshot.value(people[10], "age") == .double(30))
        // Converted values compare as doubles: a range with a fractional bound finds exactly the older people.
        let older = try store.snapshot.fetch(
            DynamicQuery("Person", where: .greater("age", .double(50.5)), sortBy: [.init("age")]))
        #expect(older.count == (0..<MigrationFixtures.people).filter { 20 + $0 % 40 > 50 }.count)
        #expect(
            try older.allSatisfy {
                if case .double(let a) = try store.snapshot.value($0, "age") { a >= 51 } else { false }
            })
    }

    static let deleteRuleAndCounts = LightweightCase(name: "change a delete rule and a count the data meets") {
        entities in
        entities[0].relationships[0].deleteRule = .cascade
        entities[1].relationships[0].minCount = 1
    } check: { (store, people) throws in
        // The first check deletes a team; later ones (after reopens) see that commit too.
        if try store.snapshot.count("Team") == MigrationFixtures.teams {
            let team = try store.snapshot.targets(people[0], "team")[0]
            try store.write { tx in try tx.delete(team) }
        }
        #expect(try store.snapshot.count("Team") == MigrationFixtures.teams - 1)
        #expect(try store.snapshot.count("Person") == MigrationFixtures.people - MigrationFixtures.people / 3)
        #expect(!store.snapshot.contains(people[0]))
        #expect(store.snapshot.contains(people[1]))
    }

    static let addIndex = LightweightCase(name: "add an index and a unique index, remove one") { entities in
        entities[1].indexes.append(.on("age"))
        entities[1].indexes.append(.unique("name"))
        entities[0].indexes.removeAll()
    } check: { (store, people) throws in
        let s = store.snapshot
        let query = DynamicQuery("Person", where: .equal("age", .int(25)))
        #expect(try s.explain(query).index == ["age"])
        #expect(try s.fetch(query).count == MigrationFixtures.people / 40 + (5 < MigrationFixtures.people % 40 ? 1 : 0))
        #expect(try s.fetch(query).allSatisfy { try s.value($0, "age") == .int(25) })
        #expect(try s.explain(DynamicQuery("Person", where: .equal("name", "First3 Last3"))).access == .uniqueLookup)
        #expect(try s.fetch(DynamicQuery("Person", where: .equal("name", "First3 Last3"))) == [people[3]])
        #expect(try s.explain(DynamicQuery("Team", where: .equal("title", "team 1"))).index == nil)
    }
}

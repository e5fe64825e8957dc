import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// What a migration refuses, and that a refusal names every offending change or object and leaves the store's files
/// byte for byte as they were; and what is no change at all.
@Suite struct MigrationRefusalTests {
    func seededStore() throws -> URL {
        let directory = MigrationFixtures.directory()
        let store = try Store(directory: directory, schema: try MigrationFixtures.v1())
        try MigrationFixtures.seed(store)
        try store.close()
        return directory
    }

    @Test func aLossyTypeChangeIsRefusedByNameAndChangesNoByte() throws {
        let directory = try seededStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let before = try MigrationFixtures.files(directory)
        var entities = MigrationFixtures.v1Entities
        entities[1].attributes[0].type = .int
        entities[1].attributes[1].type = .int8
        let error = try #require(throws: TrellisError.self) {
            try Store(directory: directory, schema: Schema(entities))
        }
        #expect(error.code == .migrationRefused)
        #expect(error.message.contains("Person.name: changing its type from String to Int can lose data"))
        #expect(error.message.contains("Person.age: changing its type from Int32 to Int8 can lose data"))
        #expect(try MigrationFixtures.files(directory) == before)
        // The old schema still opens it, with its data.
        let store = try Store(directory: directory, schema: try MigrationFixtures.v1())
        #expect(try store.snapshot.count("Person") == MigrationFixtures.people)
        try store.close()
    }

    @Test func aNewUniqueConstraintTheDataBreaksNamesTheObjectsAndChangesNoByte() throws {
        let directory = try seededStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let before = try MigrationFixtures.files(directory)
        var entities = MigrationFixtures.v1Entities
        entities[1].indexes.append(.unique("age"))
        let error = try #require(throws: TrellisError.self) {
            try Store(directory: directory, schema: Schema(entities))
        }
        #expect(error.code == .migrationRefused)
        // Person i (serial i + 1) and i + 40 share an age: the first duplicate in serial order is Person#41.
        #expect(
            error.message.contains("Person#41 and Person#1 both hold (20) in the new unique constraint on Person(age)"))
        #expect(error.message.contains("more duplicates in Person(age)"))
        #expect(try MigrationFixtures.files(directory) == before)
    }

    @Test func aNewRequiredAttributeWithoutDefaultIsRefusedWhenObjectsExist() throws {
        let directory = try seededStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let before = try MigrationFixtures.files(directory)
        var entities = MigrationFixtures.v1Entities
        entities[1].attributes[2].isOptional = false
        let required = try Store.plannedMigration(directory: directory, schema: Schema(entities))
        #expect(!required.canRun)
        // Every third person (i % 3 == 0, serial i + 1) has no nickname.
        #expect(
            Array(required.problems.prefix(3))
                == [1, 4, 7].map { "Person#\($0) holds null in 'nickname', which becomes required without a default" })
        entities[1].attributes.append(AttributeDescription("email", .string))
        let plan = try Store.plannedMigration(directory: directory, schema: Schema(entities))
        #expect(plan.problems.contains { $0.contains("Person.email: a new required attribute without a default") })
        #expect(try MigrationFixtures.files(directory) == before, "a dry run writes nothing")
        #expect(throws: TrellisError.self) { try Store(directory: directory, schema: Schema(entities)) }
        #expect(try MigrationFixtures.files(directory) == before)
    }

    @Test func theDryRunListsEachStepWithItsCostAndWritesNothing() throws {
        let directory = try seededStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let before = try MigrationFixtures.files(directory)
        var entities = MigrationFixtures.v1Entities
        entities[1].attributes.append(AttributeDescription("pinned", .bool, default: false))
        entities[1].attributes[0] = AttributeDescription("fullName", .string, originalName: "name")
        entities[1].indexes.append(.on("age"))
        let plan = try Store.plannedMigration(directory: directory, schema: Schema(entities))
        #expect(plan.canRun)
        #expect(plan.steps.map(\.kind) == [.renameAttribute, .addAttribute, .addIndex])
        #expect(plan.steps[1].objects == MigrationFixtures.people)
        #expect(plan.steps[0].objects == 0, "a rename changes the schema only")
        #expect(plan.fromFingerprint == (try MigrationFixtures.v1()).fingerprint)
        #expect(try MigrationFixtures.files(directory) == before)
    }

    @Test func reorderingEntitiesAndAttributesOrChangingDefaultsIsNoChange() throws {
        let directory = try seededStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        var entities = MigrationFixtures.v1Entities
        entities.reverse()
        entities[0].attributes.reverse()
        let name = try #require(entities[0].attributes.firstIndex { $0.name == "name" })
        entities[0].attributes[name].defaultValue = .string("someone")
        let schema = try Schema(entities)
        let plan = try Store.plannedMigration(directory: directory, schema: schema)
        #expect(!plan.isNeeded)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        let store = try Store(directory: directory, schema: schema)
        #expect(store.schema.history.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == names)
        // Stored positions win: Team stays entity 0 and Person's columns stay where they were.
        #expect(try store.schema.entityNumber("Team") == 0)
        #expect(store.schema.entities[1].attributes.map(\.name) == ["name", "age", "nickname"])
        // The app's new default is what new objects get.
        let id = try store.write { tx in try tx.insert("Person", ["age": .int(3)]) }
        #expect(try store.snapshot.value(id, "name") == .string("someone"))
        try store.close()
    }
}

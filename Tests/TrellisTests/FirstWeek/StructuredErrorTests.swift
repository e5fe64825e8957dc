import Foundation
import Testing
import Trellis

/// Issue 16, item 4: a unique violation and a refused migration said what happened only in their message, so a program
/// had to parse text to learn which constraint, which values, which object, which attribute changed how. They carry it
/// as fields now: `TrellisError.uniqueViolation` and `TrellisError.schemaDifferences`.
@Suite struct StructuredErrorTests {
    static let accounts = try! Schema([
        EntityDescription(
            "Account",
            attributes: [
                AttributeDescription("region", .string), AttributeDescription("handle", .string),
                AttributeDescription("email", .string, optional: true),
            ], indexes: [.unique("region", "handle"), .unique("email")])
    ])

    @Test func aSaveThatBreaksAUniqueConstraintNamesTheAttributeTheValueAndTheExistingObject() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        let first = Project(name: "Launch")
        context.insert(first)
        try context.save()
        let second = Project(name: "Launch")
        context.insert(second)
        let error = try #require(throws: TrellisError.self) { try context.save() }
        #expect(error.code == .uniqueViolation)
        #expect(error.object == second.objectID)
        let violation = try #require(error.uniqueViolation)
        #expect(violation.entity == "Project")
        #expect(violation.attributes == ["name"])
        #expect(violation.values == [.string("Launch")])
        #expect(violation.existing == first.objectID)
    }

    @Test func aCommitThatBreaksACompoundConstraintNamesEveryAttributeAndValue() throws {
        let store = Store(schema: Self.accounts)
        let ann = try store.write { tx in try tx.insert("Account", ["region": "eu", "handle": "ann"]) }
        var tx = store.transaction()
        let copy = try tx.insert("Account", ["region": "eu", "handle": "ann", "email": "ann@example.com"])
        let error = try #require(throws: TrellisError.self) { try store.commit(tx) }
        #expect(error.code == .uniqueViolation && error.object == copy)
        #expect(
            error.uniqueViolation
                == .init(entity: "Account", attributes: ["region", "handle"], values: ["eu", "ann"], existing: ann))
    }

    @Test func anUpdateThatBreaksAUniqueConstraintNamesTheObjectThatHasTheValue() throws {
        let store = Store(schema: Self.accounts)
        let (ann, bob) = try store.write { tx in
            (
                try tx.insert("Account", ["region": "eu", "handle": "ann", "email": "a@example.com"]),
                try tx.insert("Account", ["region": "eu", "handle": "bob"])
            )
        }
        let error = try #require(throws: TrellisError.self) {
            try store.write { tx in try tx.set(bob, "email", "a@example.com") }
        }
        #expect(error.object == bob)
        #expect(
            error.uniqueViolation
                == .init(entity: "Account", attributes: ["email"], values: ["a@example.com"], existing: ann))
    }

    @Test func aBatchInsertThatBreaksAUniqueConstraintNamesTheExistingObject() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        let launch = Project(name: "Launch")
        context.insert(launch)
        try context.save()
        let error = try #require(throws: TrellisError.self) {
            try store.batchInsert(Project.self, count: 3) { i, row in row[\.name] = i == 2 ? "Launch" : "P\(i)" }
        }
        #expect(error.code == .uniqueViolation)
        #expect(error.uniqueViolation?.existing == launch.objectID)
        #expect(error.uniqueViolation?.values == ["Launch"])
        #expect(error.object != nil && error.object != launch.objectID)
    }

    @Test func aMigrationRefusedByANewUniqueConstraintCarriesTheFirstDuplicate() throws {
        let directory = try seededContacts()
        defer { try? FileManager.default.removeItem(at: directory) }
        var entities = MigrationFixtures.v1Entities
        entities[1].indexes.append(.unique("age"))
        let error = try #require(throws: TrellisError.self) {
            try Store(directory: directory, schema: Schema(entities))
        }
        #expect(error.code == .migrationRefused)
        // Person i (serial i + 1) and i + 40 share the age 20 + i % 40: Person#41 is the first duplicate of Person#1.
        let person = try Schema(entities).entityNumber("Person")
        #expect(error.object == ObjectID(entity: person, serial: 41))
        #expect(
            error.uniqueViolation
                == .init(
                    entity: "Person", attributes: ["age"], values: [.int(20)],
                    existing: ObjectID(entity: person, serial: 1)))
        let added = try #require(error.schemaDifferences.first { $0.aspect == .index })
        #expect(added.entity == "Person" && added.property == "age" && added.stored == nil && added.new == "unique")
        #expect(added.problem?.contains("Person#41 and Person#1 both hold (20)") == true)
    }

    @Test func aRefusedMigrationListsEachDifferingAttributeWithBothSides() throws {
        let directory = try seededContacts()
        defer { try? FileManager.default.removeItem(at: directory) }
        var entities = MigrationFixtures.v1Entities
        entities[1].attributes[0].type = .int  // name: String → Int, lossy
        entities[1].attributes[1].defaultValue = .int(18)  // age: a default
        entities[1].attributes[2].isOptional = false  // nickname: required, and a third of the people have none
        entities[1].attributes.append(AttributeDescription("pinned", .bool, default: false))
        let error = try #require(throws: TrellisError.self) {
            try Store(directory: directory, schema: Schema(entities))
        }
        #expect(error.code == .migrationRefused)
        let differences = error.schemaDifferences
        let typeProblem =
            "Person.name: changing its type from String to Int can lose data (only widening integers, integers to "
            + "Double and Float to Double are inferred; use a custom migration stage)"
        #expect(
            differences == [
                SchemaDifference(
                    entity: "Person", property: "name", aspect: .type, stored: "String", new: "Int",
                    problem: typeProblem),
                SchemaDifference(entity: "Person", property: "age", aspect: .defaultValue, stored: "none", new: "18"),
                SchemaDifference(
                    entity: "Person", property: "nickname", aspect: .optionality, stored: "optional",
                    new: "required"),
                SchemaDifference(
                    entity: "Person", property: "pinned", aspect: .attribute, stored: nil, new: "Bool, default false"),
            ])
        // The lossy type change refuses the stage before its data is checked: nickname's nulls are not looked for.
        #expect(differences.contains { $0.property == "nickname" && $0.problem == nil })
        for difference in differences { #expect(error.message.contains(difference.description), "\(error.message)") }
        #expect(error.message.contains("Person.name: type String → Int (refused: "))
        #expect(error.message.contains("Person.pinned: added attribute (Bool, default false)"))
    }

    @Test func aDifferenceTheDataBreaksCarriesTheFirstOffendingObject() throws {
        let directory = try seededContacts()
        defer { try? FileManager.default.removeItem(at: directory) }
        var entities = MigrationFixtures.v1Entities
        entities[1].attributes[2].isOptional = false
        let error = try #require(throws: TrellisError.self) {
            try Store(directory: directory, schema: Schema(entities))
        }
        let difference = try #require(error.schemaDifferences.first)
        #expect(error.schemaDifferences.count == 1)
        #expect(difference.aspect == .optionality && difference.stored == "optional" && difference.new == "required")
        #expect(difference.problem == "Person#1 holds null in 'nickname', which becomes required without a default")
        // A dry run reports the same differences without throwing.
        let plan = try Store.plannedMigration(directory: directory, schema: Schema(entities))
        #expect(plan.differences == error.schemaDifferences)
    }

    @Test func aMigrationThatRunsReportsItsDifferencesInTheDryRun() throws {
        let directory = try seededContacts()
        defer { try? FileManager.default.removeItem(at: directory) }
        var entities = MigrationFixtures.v1Entities
        entities[1].attributes[0] = AttributeDescription("fullName", .string, originalName: "name")
        entities[1].attributes.append(AttributeDescription("pinned", .bool, default: false))
        entities[1].indexes.append(.on("age"))
        let plan = try Store.plannedMigration(directory: directory, schema: Schema(entities))
        #expect(plan.canRun)
        #expect(
            plan.differences.map(\.description) == [
                "Person.fullName: renamed from name to fullName",
                "Person.pinned: added attribute (Bool, default false)",
                "Person.age: added index (index)",
            ])
    }

    private func seededContacts() throws -> URL {
        let directory = MigrationFixtures.directory()
        let store = try Store(directory: directory, schema: try MigrationFixtures.v1())
        try MigrationFixtures.seed(store)
        try store.close()
        return directory
    }
}

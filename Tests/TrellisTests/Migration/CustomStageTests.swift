import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Version 1: the fixtures' contacts. Version 2 splits `name` into `first` and `last` (custom code). Version 3 merges
/// Team into Person as a `teamTitle` attribute and removes Team (custom code).
enum ContactsV1: VersionedSchema {
    static let versionIdentifier = "1.0.0"
    static func makeSchema() throws -> Schema { try MigrationFixtures.v1() }
}

enum ContactsV2: VersionedSchema {
    static let versionIdentifier = "2.0.0"
    static func makeSchema() throws -> Schema {
        var entities = MigrationFixtures.v1Entities
        entities[1].attributes.removeAll { $0.name == "name" }
        entities[1].attributes.insert(AttributeDescription("first", .string, default: ""), at: 0)
        entities[1].attributes.insert(AttributeDescription("last", .string, default: ""), at: 1)
        return try Schema(entities)
    }
}

enum ContactsV3: VersionedSchema {
    static let versionIdentifier = "3.0.0"
    static func makeSchema() throws -> Schema {
        var entities = try ContactsV2.makeSchema().entities
        entities.removeAll { $0.name == "Team" }
        entities[0].relationships.removeAll()
        entities[0].attributes.append(AttributeDescription("teamTitle", .string, default: ""))
        return try Schema(entities)
    }
}

enum ContactsPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [ContactsV1.self, ContactsV2.self, ContactsV3.self] }
    static var stages: [MigrationStage] {
        [
            .custom(fromVersion: ContactsV1.self, toVersion: ContactsV2.self) { context in
                for id in try context.old.fetch(DynamicQuery("Person")) {
                    guard case .string(let name) = try context.old.value(id, "name") else { continue }
                    let parts = name.split(separator: " ", maxSplits: 1).map(String.init)
                    try context.transaction.set(context.newID(id)!, "first", .string(parts[0]))
                    try context.transaction.set(context.newID(id)!, "last", .string(parts.count > 1 ? parts[1] : ""))
                }
            },
            .custom(fromVersion: ContactsV2.self, toVersion: ContactsV3.self) { context in
                for id in try context.old.fetch(DynamicQuery("Person")) {
                    guard let team = try context.old.targets(id, "team").first else { continue }
                    // Team is removed (retired in place), so newID(id) is id; it is nil for the Team objects.
                    try context.transaction.set(
                        context.newID(id)!, "teamTitle", try context.old.value(team, "title") ?? .null)
                }
            },
        ]
    }
}

@Suite struct CustomStageTests {
    func checkV3(_ store: Store, _ people: [ObjectID]) throws {
        let s = store.snapshot
        #expect(try s.count("Person") == MigrationFixtures.people)
        #expect(throws: TrellisError.self) { try s.count("Team") }
        for (i, id) in people.enumerated() {
            #expect(try s.value(id, "first") == .string("First\(i)"))
            #expect(try s.value(id, "last") == .string("Last\(i)"))
            #expect(try s.value(id, "teamTitle") == .string("team \(i % 3)"))
            #expect(try s.value(id, "age") == .int(Int64(20 + i % 40)))
        }
    }

    @Test func aStoreOfVersionOneMigratesThroughTwoToThreeInOneOpen() throws {
        let directory = MigrationFixtures.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let people: [ObjectID]
        do {
            let store = try Store(directory: directory, schema: try ContactsV1.makeSchema())
            people = try MigrationFixtures.seed(store)
            try store.close()
        }
        let segments = {
            try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("segment-") }
                .count
        }
        let before = try segments()
        let store = try Store(directory: directory, migrationPlan: ContactsPlan.self)
        #expect(try segments() == before + 1, "the whole migration is one record in one new segment")
        try checkV3(store, people)
        let history = store.schema.history
        #expect(history.count == 1)
        #expect(history.first?.fromVersion == "1.0.0")
        #expect(history.first?.toVersion == "3.0.0")
        #expect(history.first?.fromFingerprint == (try ContactsV1.makeSchema()).fingerprint)
        try store.close()

        // Replay of the record gives the same store; the plan then finds it at version 3 and does nothing.
        let reopened = try Store(directory: directory, migrationPlan: ContactsPlan.self)
        try checkV3(reopened, people)
        #expect(reopened.schema.history.count == 1)
        try reopened.close()
        let plain = try Store(directory: directory, schema: try ContactsV3.makeSchema())
        try checkV3(plain, people)
        try plain.close()
    }

    @Test func aStoreOfVersionTwoRunsOnlyTheLastStage() throws {
        let directory = MigrationFixtures.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let store = try Store(directory: directory, schema: try ContactsV2.makeSchema())
            try store.write { tx in
                let team = try tx.insert("Team", ["title": "blue"])
                let person = try tx.insert("Person", ["first": "Ada", "last": "L", "age": 36])
                try tx.link(person, "team", team)
            }
            try store.close()
        }
        let store = try Store(directory: directory, migrationPlan: ContactsPlan.self)
        let person = try store.snapshot.fetch(DynamicQuery("Person"))[0]
        #expect(try store.snapshot.value(person, "teamTitle") == .string("blue"))
        #expect(try store.snapshot.value(person, "first") == .string("Ada"))
        #expect(store.schema.history.last?.fromVersion == "2.0.0")
        try store.close()
    }
}

/// Two versions of one structure, with code between them: only the recorded version tells them apart.
enum RatingsV1: VersionedSchema {
    static let versionIdentifier = "r1"
    static func makeSchema() throws -> Schema {
        try Schema([EntityDescription("Film", attributes: [AttributeDescription("stars", .int, default: 1)])])
    }
}

enum RatingsV2: VersionedSchema {
    static let versionIdentifier = "r2"
    static func makeSchema() throws -> Schema { try RatingsV1.makeSchema() }
}

enum RatingsPlanV1: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [RatingsV1.self] }
    static var stages: [MigrationStage] { [] }
}

enum RatingsPlanV2: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [RatingsV1.self, RatingsV2.self] }
    static var stages: [MigrationStage] {
        [
            .custom(fromVersion: RatingsV1.self, toVersion: RatingsV2.self) { context in
                for id in try context.old.fetch(DynamicQuery("Film")) {
                    try context.transaction.set(id, "stars", .int(100))
                }
            }
        ]
    }
}

@Suite struct RecordedVersionTests {
    @Test func aStoreCreatedWithAPlanRecordsItsVersionSoALaterStageOfTheSameStructureRuns() throws {
        let directory = MigrationFixtures.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let store = try Store(directory: directory, migrationPlan: RatingsPlanV1.self)
            #expect(store.schema.history.map(\.toVersion) == ["r1"])
            try store.write { tx in _ = try tx.insert("Film", [:]) }
            try store.close()
        }
        let store = try Store(directory: directory, migrationPlan: RatingsPlanV2.self)
        let film = try store.snapshot.fetch(DynamicQuery("Film"))[0]
        #expect(try store.snapshot.value(film, "stars") == .int(100))
        #expect(store.schema.history.map(\.toVersion) == ["r1", "r2"])
        try store.close()
        // Recorded at r2 now: the stage does not run again.
        let again = try Store(directory: directory, migrationPlan: RatingsPlanV2.self)
        #expect(again.schema.history.count == 2)
        try again.close()
    }

    @Test func aReadOnlyOpenMigratesInMemoryWithoutMovingTheSequence() throws {
        let directory = MigrationFixtures.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(directory: directory, schema: try MigrationFixtures.v1())
        try MigrationFixtures.seed(store)
        let sequence = store.snapshot.sequence
        try store.close()
        let before = try MigrationFixtures.files(directory)
        var entities = MigrationFixtures.v1Entities
        entities[1].attributes.append(AttributeDescription("score", .double, default: 2))
        var options = StoreOptions()
        options.readOnly = true
        let reader = try Store(directory: directory, schema: Schema(entities), options: options)
        #expect(reader.snapshot.sequence == sequence)
        let person = try reader.snapshot.fetch(DynamicQuery("Person"))[0]
        #expect(try reader.snapshot.value(person, "score") == .double(2))
        try reader.close()
        #expect(try MigrationFixtures.files(directory) == before)
    }
}

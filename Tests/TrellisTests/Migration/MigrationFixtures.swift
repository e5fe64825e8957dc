import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// A small contacts model in its first version, with data, for migration tests: people with a name, an age (Int32)
/// and an optional nickname, each in a team (to-one, inverse to-many), teams with a unique title.
enum MigrationFixtures {
    static let v1Entities: [EntityDescription] = [
        EntityDescription(
            "Team", attributes: [AttributeDescription("title", .string)],
            relationships: [RelationshipDescription("members", to: "Person", inverse: "team", toMany: true)],
            indexes: [.unique("title")]),
        EntityDescription(
            "Person",
            attributes: [
                AttributeDescription("name", .string), AttributeDescription("age", .int32),
                AttributeDescription("nickname", .string, optional: true),
            ],
            relationships: [RelationshipDescription("team", to: "Team", inverse: "members")]),
    ]

    static func v1() throws -> Schema { try Schema(v1Entities) }

    static let people = 150
    static let teams = 3

    /// Writes the v1 data: 3 teams, 150 people, person i aged 20 + i % 40, every third without a nickname, in team
    /// i % 3. Returns the people's IDs in order.
    @discardableResult
    static func seed(_ store: Store) throws -> [ObjectID] {
        try store.write { tx -> [ObjectID] in
            var teamIDs: [ObjectID] = []
            for t in 0..<teams { teamIDs.append(try tx.insert("Team", ["title": .string("team \(t)")])) }
            var ids: [ObjectID] = []
            for i in 0..<people {
                let person = try tx.insert(
                    "Person",
                    [
                        "name": .string("First\(i) Last\(i)"), "age": .int(Int64(20 + i % 40)),
                        "nickname": i % 3 == 0 ? .null : .string("nick\(i)"),
                    ])
                try tx.link(person, "team", teamIDs[i % 3])
                ids.append(person)
            }
            return ids
        }
    }

    /// A fresh directory under the temporary directory, removed by the caller.
    static func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("trellis-migration-\(UUID().uuidString)")
    }

    /// Every file of the store directory and its bytes, for "changed nothing" checks (the lock file holds the pid of
    /// the last writer and is not store data).
    static func files(_ directory: URL) throws -> [String: Data] {
        var out: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name != "LOCK" {
            out[name] = try Data(contentsOf: directory.appendingPathComponent(name))
        }
        return out
    }
}

import Foundation
import Testing

@testable import Trellis
@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// A small contacts model in its first version, with data, for migration tests: people with a name, an age (Int32)
/// and an optional nickname, each in a team (to-one, inverse to-many), teams with a unique title.
enum MigrationFixtures {
    static let v1Entities = ContactsFixture.v1Entities

    static func v1() throws -> Schema { try Schema(v1Entities) }

    static let people = ContactsFixture.people
    static let teams = ContactsFixture.teams

    /// Writes the v1 data: 3 teams, 150 people, person i aged 20 + i % 40, every third without a nickname, in team
    /// i % 3. Returns the people's IDs in order.
    @discardableResult
    static func seed(_ store: Store) throws -> [ObjectID] { try ContactsFixture.seed(store) }

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

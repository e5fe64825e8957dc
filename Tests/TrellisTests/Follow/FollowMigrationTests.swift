import Foundation
import Synchronization
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Issue 18: a follower and a migration by a writer in another process (`trellis-crashtest migrate-contacts`, v1 to
/// v2 of the contacts store). A follower whose model is the new schema goes on; one whose model is the old schema
/// stops with `.schemaMismatch` naming both fingerprints.
@Suite(.serialized) struct FollowMigrationTests {
    static func pausedFollower(_ directory: URL, _ schema: Schema) throws -> Store {
        var options = StoreOptions.follower
        options.followNotifications = false
        options.followPollInterval = 3_600
        let store = try Store(directory: directory, schema: schema, options: options)
        // The thread's first step reads what is durable whenever the thread first runs: wait for it, so that from
        // here on the follower reads only when the test calls `catchUp()`.
        #expect(eventually(within: 60) { (store.follower?.stepsTaken ?? 0) >= 1 })
        return store
    }

    /// A fresh read-only open of the store with `schema`.
    static func fresh(_ directory: URL, _ schema: Schema) throws -> Snapshot {
        let store = try Store(directory: directory, schema: schema, options: StoreOptions(readOnly: true))
        defer { try? store.close() }
        return store.snapshot
    }

    @Test(
        "a follower opened with the new model shows the old store migrated in memory, and goes on following after another process migrates it"
    )
    func aFollowerWithTheNewModelFollowsThroughTheMigration() throws {
        let temporary = TemporaryDirectory()
        let directory = temporary.store
        let seeded = try CrashChild.run(["seed-contacts", "--dir", directory.path, "--people", "40"])
        #expect(seeded.lines.last == "seeded 1")
        let follower = try Self.pausedFollower(directory, ContactsFixture.v2)
        let published = Mutex<[Commit]>([])
        let token = follower.observe { commit in published.locked { $0.append(commit) } }
        defer { token.cancel() }
        #expect(follower.follower?.isMigratedInMemory == true)
        #expect(follower.snapshot.schema.fingerprint == ContactsFixture.v2.fingerprint)
        #expect(
            try ContactsFixture.dump(follower.snapshot)
                == ContactsFixture.dump(Self.fresh(directory, ContactsFixture.v2)))

        let migrated = try CrashChild.run(["migrate-contacts", "--dir", directory.path, "--add", "Ada Lovelace"])
        #expect(migrated.lines.contains("migrated 2") && migrated.lines.contains("added 3"))
        #expect(try follower.catchUp() == 3)
        #expect(follower.failure == nil && follower.isFollowing)
        #expect(follower.follower?.isMigratedInMemory == false)
        let commits = published.locked { $0 }
        #expect(commits.map(\.sequence) == [3])
        #expect(commits.first?.isRefresh == true && commits.first?.baseSequence == 1)
        #expect(commits.first?.changes.inserts.count == 1)
        let onDisk = try Self.fresh(directory, ContactsFixture.v2)
        #expect(follower.snapshot.differences(from: onDisk).isEmpty)
        let (shown, expected) = (try ContactsFixture.dump(follower.snapshot), try ContactsFixture.dump(onDisk))
        #expect(shown == expected, "\(zip(shown, expected).first { $0.0 != $0.1 }.map { "\($0)" } ?? "")")

        // From now on one commit at a time, in the new schema.
        let next = try CrashChild.run(["migrate-contacts", "--dir", directory.path, "--add", "Grace Hopper"])
        #expect(next.lines.contains("added 4"))
        #expect(try follower.catchUp() == 4)
        let later = published.locked { $0 }.dropFirst()
        #expect(later.map(\.sequence) == [4] && later.allSatisfy { !$0.isRefresh })
        let name = try follower.snapshot.value(try #require(later.first?.changes.inserts.first?.id), "fullName")
        #expect(name == .string("Grace Hopper"))
        #expect(follower.snapshot.differences(from: try Self.fresh(directory, ContactsFixture.v2)).isEmpty)
        try follower.close()
    }

    @Test("a follower opened with the old model stops at another process's migration, naming both fingerprints")
    func aFollowerWithTheOldModelStopsAtTheMigration() throws {
        let temporary = TemporaryDirectory()
        let directory = temporary.store
        let seeded = try CrashChild.run(["seed-contacts", "--dir", directory.path, "--people", "40"])
        #expect(seeded.lines.last == "seeded 1")
        let follower = try Self.pausedFollower(directory, ContactsFixture.v1)
        #expect(follower.follower?.isMigratedInMemory == false)
        let before = follower.snapshot

        let migrated = try CrashChild.run(["migrate-contacts", "--dir", directory.path, "--add", "Ada Lovelace"])
        #expect(migrated.lines.contains("added 3"))
        let error = try #require(throws: TrellisError.self) { try follower.catchUp() }
        #expect(error.code == .schemaMismatch)
        #expect(error.message.contains(JournalFollower.hex(ContactsFixture.v1.fingerprint)))
        #expect(error.message.contains(JournalFollower.hex(ContactsFixture.v2.fingerprint)))
        #expect(follower.failure?.code == .schemaMismatch && !follower.isFollowing)
        // It keeps showing the last version of its schema.
        #expect(follower.snapshot.sequence == 1 && follower.snapshot.differences(from: before).isEmpty)
        try follower.close()
    }
}

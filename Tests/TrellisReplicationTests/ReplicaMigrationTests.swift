import Foundation
import Testing
import Trellis
import TrellisReplication

/// A writer's schema migration reaches replicas as its record: a running replica applies it and serves the new
/// schema, and a new one created after it starts in the schema of record 1 and applies it too.
@Suite(.serialized) struct ReplicaMigrationTests {
    typealias V2 = ReplicaTests.V2

    @Test func runningAndNewReplicasFollowAWriterMigrationAndServeTheNewSchema() throws {
        let server = try NATSServer()
        defer { server.tearDown() }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-migrate-\(UUID())")
        defer { try? FileManager.default.removeItem(at: base) }
        let writerURL = base.appendingPathComponent("writer")
        let store = try Store(directory: writerURL, models: [ReplicaTests.Project.self, ReplicaTests.Task.self])
        var live: [(ReplicaTests.Project, [ReplicaTests.Task])] = []
        try ReplicaTests.work(ModelContext(store), count: 50, live: &live, start: 0)
        let publisher = try ReplicationPublisher(store: store, url: server.url, name: "mig")
        #expect(try publisher.publishPending() == 50)
        let runningURL = base.appendingPathComponent("running")
        let running = try Replica(url: server.url, name: "mig", directory: runningURL)
        running.start()
        #expect(running.waitUntilApplied(50, timeout: .seconds(60)))
        let before = running.store
        #expect(!before.schema.entities.contains { $0.attributes.contains { $0.name == "done" } })

        // The writer reopens with V2 (Task gains `done`): record 51 is the migration.
        #expect(publisher.stop())
        try store.close()
        let migrated = try Store(directory: writerURL, models: [V2.Project.self, V2.Task.self])
        try ReplicaTests.workV2(ModelContext(migrated), count: 20, start: 50)
        let publisherV2 = try ReplicationPublisher(store: migrated, url: server.url, name: "mig")
        #expect(try publisherV2.publishPending() == 21)
        #expect(running.waitUntilApplied(71, timeout: .seconds(60)), "\(running.failure.map { "\($0)" } ?? "")")
        #expect(running.failure == nil)

        // A replica created now starts from record 1 in its schema (not the writer's current one).
        let freshURL = base.appendingPathComponent("fresh")
        let fresh = try Replica(url: server.url, name: "mig", directory: freshURL)
        fresh.start()
        #expect(fresh.waitUntilApplied(71, timeout: .seconds(60)), "\(fresh.failure.map { "\($0)" } ?? "")")

        // Both serve the new schema (a new store object; the one before is closed) to the V2 models.
        let expected = try ModelContext(migrated).fetch(FetchDescriptor<V2.Task>())
            .map { "\($0.title) \($0.count) \($0.done)" }.sorted()
        #expect(expected.contains { $0.hasSuffix("true") })
        for replica in [running, fresh] {
            #expect(replica.store !== before)
            #expect(replica.store.schema.history.last?.sequence == 51)
            let tasks = try ModelContext(replica.store).fetch(FetchDescriptor<V2.Task>())
            #expect(tasks.map { "\($0.title) \($0.count) \($0.done)" }.sorted() == expected)
            #expect(replica.stop())
        }
        #expect(publisherV2.stop())
        try migrated.close()
        let writerExport = try ReplicaTests.export(writerURL)
        #expect(try ReplicaTests.export(runningURL) == writerExport)
        #expect(try ReplicaTests.export(freshURL) == writerExport)
    }
}

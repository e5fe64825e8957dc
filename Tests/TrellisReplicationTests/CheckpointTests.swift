import Foundation
import Testing
import Trellis
import TrellisJournal
import TrellisNATS
import TrellisReplication

/// Checkpoints through the object store: the publisher puts the writer's checkpoint once the stream holds its record,
/// and a new replica starts from it, then applies the records after it.
@Suite(.serialized) struct CheckpointTests {
    @Test func aNewReplicaBootstrapsFromTheCheckpointThenTheRecordsAfterIt() throws {
        let server = try NATSServer()
        defer { server.tearDown() }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-checkpoint-\(UUID())")
        defer { try? FileManager.default.removeItem(at: base) }
        let writerURL = base.appendingPathComponent("writer")
        let store = try Store(directory: writerURL, models: [PublisherTests.Item.self])
        let publisher = try ReplicationPublisher(store: store, url: server.url, name: "boot")
        try PublisherTests.commit(store, count: 300, label: "a")
        #expect(try publisher.publishPending() == 256)
        #expect(try publisher.publishPending() == 44)
        try store.compact()
        try PublisherTests.commit(store, count: 50, label: "b")
        #expect(publisher.checkpointSequence == 0)
        #expect(try publisher.publishPending() == 50)
        #expect(publisher.checkpointSequence == 300)

        // The object is the checkpoint file, byte for byte.
        let connection = try NATSConnection(try NATSOptions(url: server.url))
        let bucket = try ObjectStore(JetStream(connection), bucket: "trellis-boot")
        let file = try #require(
            try FileManager.default.contentsOfDirectory(atPath: writerURL.path).first { $0.hasPrefix("checkpoint-") })
        let onDisk = try Data(contentsOf: writerURL.appendingPathComponent(file))
        #expect(try bucket.get("checkpoint-000000000000012c") == [UInt8](onDisk))
        let latest = String(decoding: try bucket.get("latest"), as: UTF8.self)
        #expect(latest.contains("\"sequence\":300") && latest.contains("checkpoint-000000000000012c"))
        // The stream dropped the records before the checkpoint's; record 300's message stays, for resuming.
        let info = try JetStream(connection).streamInfo("TRELLIS_boot")
        #expect(info.state.firstSequence == 300 && info.state.lastSequence == 350 && info.state.messages == 51)
        connection.close()

        let replicaURL = base.appendingPathComponent("replica")
        let replica = try Replica(url: server.url, name: "boot", directory: replicaURL)
        replica.start()
        #expect(replica.waitUntilApplied(350, timeout: .seconds(60)))
        #expect(replica.failure == nil)
        let items = try ModelContext(replica.store).fetch(FetchDescriptor<PublisherTests.Item>())
        let expected = try ModelContext(store).fetch(FetchDescriptor<PublisherTests.Item>())
        #expect(items.count == 350)
        #expect(
            items.map { "\($0.name) \($0.count)" }.sorted() == expected.map { "\($0.name) \($0.count)" }.sorted())
        #expect(replica.stop())
        // Its journal starts after the checkpoint: records 1...300 were never applied one by one.
        let early = DurableFrameReader(directory: replicaURL.path, after: 0)
        #expect(throws: TrellisError.self) { _ = try early.next(limit: 1) }
        early.close()
        let late = DurableFrameReader(directory: replicaURL.path, after: 300)
        let frames = try late.next(limit: 100)
        late.close()
        #expect(frames.map(\.sequence) == Array(301...350))

        // A publisher started again resumes after record 350 (the stream's last) and sends what came since.
        try PublisherTests.commit(store, count: 5, label: "c")
        let again = try ReplicationPublisher(store: store, url: server.url, name: "boot")
        #expect(try again.publishPending() == 5)
        #expect(again.publishedSequence == 355 && again.failure == nil)
        again.stop()
        #expect(publisher.stop())
        try store.close()
    }

    /// A checkpoint object whose header reads but whose body is damaged fails the replica's start (its store's open
    /// loads and checks the checkpoint) and leaves no store: with the object whole again, the next start bootstraps.
    @Test func aDamagedCheckpointFailsTheBootstrapAndLeavesNoStore() throws {
        let server = try NATSServer()
        defer { server.tearDown() }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-checkpoint-\(UUID())")
        defer { try? FileManager.default.removeItem(at: base) }
        let store = try Store(directory: base.appendingPathComponent("writer"), models: [PublisherTests.Item.self])
        let publisher = try ReplicationPublisher(store: store, url: server.url, name: "bad")
        try PublisherTests.commit(store, count: 100, label: "a")
        #expect(try publisher.publishPending() == 100)
        try store.compact()
        try PublisherTests.commit(store, count: 10, label: "b")
        #expect(try publisher.publishPending() == 10)
        #expect(publisher.checkpointSequence == 100)
        let connection = try NATSConnection(try NATSOptions(url: server.url))
        defer { connection.close() }
        let bucket = try ObjectStore(JetStream(connection), bucket: "trellis-bad")
        let name = "checkpoint-0000000000000064"
        let good = try bucket.get(name)
        var damaged = good
        damaged[damaged.count - 40] ^= 0x5A
        _ = try bucket.put(name, data: damaged)

        let replicaURL = base.appendingPathComponent("replica")
        #expect(throws: (any Error).self) { _ = try Replica(url: server.url, name: "bad", directory: replicaURL) }
        #expect(!FileManager.default.fileExists(atPath: replicaURL.appendingPathComponent("MANIFEST").path))

        _ = try bucket.put(name, data: good)
        let replica = try Replica(url: server.url, name: "bad", directory: replicaURL)
        replica.start()
        #expect(replica.waitUntilApplied(110, timeout: .seconds(60)))
        #expect(replica.failure == nil)
        #expect(try ModelContext(replica.store).fetch(FetchDescriptor<PublisherTests.Item>()).count == 110)
        #expect(replica.stop())
        #expect(publisher.stop())
        try store.close()
    }
}

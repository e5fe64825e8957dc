import Foundation
import Testing
import Trellis
import TrellisJournal
import TrellisNATS
import TrellisReplication

/// Records larger than the server's `max_payload` travel as objects `rec-<n>` of the store's bucket, their messages
/// keeping the order and the fence (replication-format.md, "Records over max_payload").
@Suite(.serialized) struct LargeRecordTests {
    /// `count` random hex digits: incompressible enough that the stored frame stays about half this size.
    static func noise(_ count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        return String((0..<count).map { _ in digits[Int(generator.next() % 16)] })
    }

    /// One commit of `items` items whose names are `size` random hex digits each.
    static func commitLarge(_ store: Store, items: Int, size: Int, label: String) throws {
        let context = ModelContext(store)
        for i in 0..<items {
            let item = PublisherTests.Item()
            item.name = "\(label)-\(i)-" + noise(size)
            item.count = i
            context.insert(item)
        }
        try context.save()
    }

    @Test func aRecordOverMaxPayloadTravelsAsAnObjectAndTheReplicaEqualsTheWriter() throws {
        let server = try NATSServer(maxPayload: 65_536)
        defer { server.tearDown() }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-large-\(UUID())")
        defer { try? FileManager.default.removeItem(at: base) }
        let writerURL = base.appendingPathComponent("writer")
        let store = try Store(directory: writerURL, models: [PublisherTests.Item.self])
        try PublisherTests.commit(store, count: 20, label: "a")
        // Record 21: about 1.2 MB of names, far over the 64 KiB max_payload even compressed.
        try Self.commitLarge(store, items: 4, size: 300_000, label: "big")
        #expect(store.snapshot.sequence == 21)
        let publisher = try ReplicationPublisher(store: store, url: server.url, name: "large")
        #expect(try publisher.publishPending() == 21)
        #expect(publisher.failure == nil && publisher.publishedSequence == 21)

        let connection = try NATSConnection(try NATSOptions(url: server.url))
        defer { connection.close() }
        #expect(connection.serverInfo.maxPayload == 65_536)
        let js = JetStream(connection)
        let reader = DurableFrameReader(directory: writerURL.path, after: 20)
        let frame = try #require(try reader.next(limit: 1).first)
        reader.close()
        #expect(frame.sequence == 21 && frame.bytes.count > 65_536)
        // Record 21's message: its place (stream message 21, fenced by message 20), no payload, the object named.
        let message = try js.message(stream: "TRELLIS_large", sequence: 21)
        #expect(message.headers?["Nats-Msg-Id"] == "21")
        #expect(message.headers?["Trellis-Object"] == "rec-21")
        #expect(message.headers?["Trellis-Digest"] == ObjectStore.digest(of: frame.bytes))
        #expect(message.payload.isEmpty)
        #expect(try ObjectStore(js, bucket: "trellis-large").get("rec-21") == frame.bytes)
        // A small record stays in its message, and has no object.
        let small = try js.message(stream: "TRELLIS_large", sequence: 20)
        #expect(small.headers?["Trellis-Object"] == nil && !small.payload.isEmpty)
        #expect(throws: NATSError.self) { _ = try ObjectStore(js, bucket: "trellis-large").info("rec-20") }

        // A publisher started again resumes after the large record (it is its own: the object's bytes match), then
        // sends more small and large records.
        #expect(publisher.stop())
        let again = try ReplicationPublisher(store: store, url: server.url, name: "large")
        try PublisherTests.commit(store, count: 5, label: "b")
        try Self.commitLarge(store, items: 2, size: 200_000, label: "second")
        try PublisherTests.commit(store, count: 3, label: "c")
        #expect(try again.publishPending() == 9)
        #expect(again.failure == nil && again.publishedSequence == 30)
        let second = try js.message(stream: "TRELLIS_large", sequence: 27)
        #expect(second.headers?["Trellis-Object"] == "rec-27" && second.payload.isEmpty)
        #expect(try js.streamInfo("TRELLIS_large").state.messages == 30)

        let replicaURL = base.appendingPathComponent("replica")
        let replica = try Replica(url: server.url, name: "large", directory: replicaURL)
        replica.start()
        #expect(replica.waitUntilApplied(30, timeout: .seconds(60)))
        #expect(replica.failure == nil)
        let items = try ModelContext(replica.store).fetch(FetchDescriptor<PublisherTests.Item>())
        let expected = try ModelContext(store).fetch(FetchDescriptor<PublisherTests.Item>())
        #expect(items.count == 34)
        #expect(items.map { "\($0.name) \($0.count)" }.sorted() == expected.map { "\($0.name) \($0.count)" }.sorted())
        #expect(replica.stop())
        #expect(again.stop())
        try store.close()
        // The replica's store, reopened by `trellis export` in a child process, equals the writer's.
        let writerExport = try ReplicaTests.export(writerURL)
        #expect(!writerExport.isEmpty)
        #expect(try ReplicaTests.export(replicaURL) == writerExport)
    }

    @Test func aSecondWriterCannotReplaceALargeRecordsObject() throws {
        let server = try NATSServer(maxPayload: 65_536)
        defer { server.tearDown() }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-large-fence-\(UUID())")
        defer { try? FileManager.default.removeItem(at: base) }
        let first = try Store(directory: base.appendingPathComponent("first"), models: [PublisherTests.Item.self])
        let other = try Store(directory: base.appendingPathComponent("other"), models: [PublisherTests.Item.self])
        try Self.commitLarge(first, items: 1, size: 300_000, label: "first")
        try Self.commitLarge(other, items: 1, size: 300_000, label: "other")
        let publisher = try ReplicationPublisher(store: first, url: server.url, name: "fence")
        #expect(try publisher.publishPending() == 1)
        // The other store's record 1 differs: refused, and the first writer's object is left as it was.
        let intruder = try ReplicationPublisher(store: other, url: server.url, name: "fence")
        #expect(throws: ReplicationError.self) { try intruder.publishPending() }
        #expect(intruder.failure?.code == .fenced)
        let connection = try NATSConnection(try NATSOptions(url: server.url))
        defer { connection.close() }
        let reader = DurableFrameReader(directory: base.appendingPathComponent("first").path, after: 0)
        let frame = try #require(try reader.next(limit: 1).first)
        reader.close()
        #expect(try ObjectStore(JetStream(connection), bucket: "trellis-fence").get("rec-1") == frame.bytes)
        #expect(publisher.stop() && intruder.stop())
        try first.close()
        try other.close()
    }

    @Test func aCheckpointDeletesTheLargeRecordObjectsAndThePreviousCheckpointItCovers() throws {
        let server = try NATSServer(maxPayload: 65_536)
        defer { server.tearDown() }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-large-\(UUID())")
        defer { try? FileManager.default.removeItem(at: base) }
        let store = try Store(directory: base.appendingPathComponent("writer"), models: [PublisherTests.Item.self])
        let publisher = try ReplicationPublisher(store: store, url: server.url, name: "gc")
        try PublisherTests.commit(store, count: 5, label: "a")
        try Self.commitLarge(store, items: 2, size: 100_000, label: "big")  // record 6
        try PublisherTests.commit(store, count: 4, label: "b")
        #expect(try publisher.publishPending() == 10)
        let connection = try NATSConnection(try NATSOptions(url: server.url))
        defer { connection.close() }
        let bucket = try ObjectStore(JetStream(connection), bucket: "trellis-gc")
        #expect(try bucket.info("rec-6").size > 65_536)

        // A checkpoint at record 10 covers record 6: the stream drops it, and its object goes too.
        try store.compact()
        try PublisherTests.commit(store, count: 1, label: "c")
        #expect(try publisher.publishPending() == 1)
        #expect(publisher.checkpointSequence == 10)
        let first = "checkpoint-" + String(repeating: "0", count: 15) + "a"
        #expect(try bucket.info(first).size > 0)
        #expect(throws: NATSError.self) { _ = try bucket.info("rec-6") }

        // A large record after it is the next checkpoint's own record (16): its object stays with its message, and
        // the checkpoint of record 10 is replaced (deleted once `latest` names the new one).
        try PublisherTests.commit(store, count: 4, label: "d")
        try Self.commitLarge(store, items: 2, size: 100_000, label: "big2")  // record 16
        #expect(try publisher.publishPending() == 5)
        try store.compact()
        try PublisherTests.commit(store, count: 1, label: "e")
        #expect(try publisher.publishPending() == 1)
        #expect(publisher.checkpointSequence == 16)
        #expect(throws: NATSError.self) { _ = try bucket.info(first) }
        #expect(try bucket.info("checkpoint-" + String(repeating: "0", count: 14) + "10").size > 0)
        #expect(try bucket.info("rec-16").size > 65_536)

        // A new replica still starts from the checkpoint and equals the writer.
        let replica = try Replica(url: server.url, name: "gc", directory: base.appendingPathComponent("replica"))
        replica.start()
        #expect(replica.waitUntilApplied(17, timeout: .seconds(60)))
        #expect(replica.failure == nil)
        let items = try ModelContext(replica.store).fetch(FetchDescriptor<PublisherTests.Item>())
        let expected = try ModelContext(store).fetch(FetchDescriptor<PublisherTests.Item>())
        #expect(items.map(\.name).sorted() == expected.map(\.name).sorted())
        #expect(replica.stop())
        #expect(publisher.stop())
        try store.close()
    }
}

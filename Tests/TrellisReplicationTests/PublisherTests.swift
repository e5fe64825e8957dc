import Foundation
import Testing
import Trellis
import TrellisJournal
import TrellisNATS
import TrellisReplication

/// The publisher against a real `nats-server -js`: records in order with their dedup ids and fences, a restart that
/// resumes without duplicates, a server stopped while the writer commits, and a second writer refused.
@Suite(.serialized) struct PublisherTests {
    final class Item: Model {
        @Attribute var name = ""
        @Attribute var count = 0
    }

    static func temporary(_ label: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("trellis-repl-\(label)-\(UUID().uuidString)")
    }

    /// `count` commits of one insert each (every tenth also updates the previous item).
    static func commit(_ store: Store, count: Int, label: String) throws {
        let context = ModelContext(store)
        var previous: Item?
        for i in 0..<count {
            let item = Item()
            item.name = "\(label)-\(i)"
            item.count = i
            context.insert(item)
            if i % 10 == 9, let previous { previous.count += 1000 }
            try context.save()
            previous = item
        }
    }

    /// Every message of the stream, checked against the store's journal: message i is record i, with its id, its
    /// format and salt headers, and the record's frame bytes.
    static func checkStream(
        _ server: NATSServer, name: String, directory: URL, records: UInt64, from first: UInt64 = 1
    ) throws {
        let connection = try NATSConnection(try NATSOptions(url: server.url))
        defer { connection.close() }
        let js = JetStream(connection)
        let info = try js.streamInfo("TRELLIS_" + name)
        #expect(info.state.messages == records)
        let reader = DurableFrameReader(directory: directory.path, after: first - 1)
        defer { reader.close() }
        var frames: [DurableFrame] = []
        while UInt64(frames.count) < records - first + 1 {
            let batch = try reader.next(limit: 1000)
            if batch.isEmpty { break }
            frames += batch
        }
        try #require(UInt64(frames.count) >= records - first + 1)
        // Record n is stream message n.
        var sequence = first
        for n in first...records {
            let message = try js.message(stream: "TRELLIS_" + name, sequence: sequence)
            let frame = frames[Int(n - first)]
            #expect(message.subject == "trellis.\(name).rec")
            #expect(message.headers?["Nats-Msg-Id"] == String(n))
            #expect(message.headers?["Trellis-Format"] == String(frame.version))
            #expect(message.headers?["Trellis-Salt"].flatMap { UInt64($0, radix: 16) } == frame.salt)
            #expect(frame.sequence == n && message.payload == frame.bytes)
            if message.payload != frame.bytes { break }
            sequence += 1
        }
    }

    @Test func aThousandCommitsArePublishedInOrderAndARestartResumesWithoutDuplicates() throws {
        let server = try NATSServer()
        defer { server.tearDown() }
        let directory = Self.temporary("publish")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(directory: directory, models: [Item.self])
        try Self.commit(store, count: 1_000, label: "a")
        let publisher = try ReplicationPublisher(store: store, url: server.url, name: "orders")
        publisher.start()
        #expect(publisher.waitUntilPublished(1_000, timeout: .seconds(120)))
        #expect(publisher.failure == nil)
        #expect(publisher.stop())
        try Self.checkStream(server, name: "orders", directory: directory, records: 1_000)

        // Commits while no publisher runs, then a new one: it resumes after the stream's last record.
        try Self.commit(store, count: 200, label: "b")
        let again = try ReplicationPublisher(store: store, url: server.url, name: "orders")
        again.start()
        #expect(again.waitUntilPublished(1_200, timeout: .seconds(60)))
        #expect(again.stop())
        #expect(again.publishedSequence == 1_200 && again.failure == nil)
        try Self.checkStream(server, name: "orders", directory: directory, records: 1_200)
        try store.close()
    }

    @Test func theWriterCommitsWhileTheServerIsDownAndTheStreamCatchesUp() throws {
        let server = try NATSServer()
        defer { server.tearDown() }
        let directory = Self.temporary("outage")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(directory: directory, models: [Item.self])
        let publisher = try ReplicationPublisher(store: store, url: server.url, name: "outage")
        publisher.start()
        try Self.commit(store, count: 100, label: "before")
        #expect(publisher.waitUntilPublished(100, timeout: .seconds(60)))
        try server.stop()
        // Every commit succeeds with the server down.
        try Self.commit(store, count: 300, label: "during")
        #expect(store.snapshot.sequence == 400)
        #expect(publisher.publishedSequence == 100)
        try server.start()
        #expect(publisher.waitUntilPublished(400, timeout: .seconds(60)))
        try Self.commit(store, count: 50, label: "after")
        #expect(publisher.waitUntilPublished(450, timeout: .seconds(60)))
        #expect(publisher.stop())
        #expect(publisher.failure == nil)
        try Self.checkStream(server, name: "outage", directory: directory, records: 450)
        try store.close()
    }

    @Test func aHistoryConsumerKeepsWhatACompactionDuringAnOutageWouldRemove() throws {
        let server = try NATSServer()
        defer { server.tearDown() }
        let kept = Self.temporary("kept")
        let lost = Self.temporary("lost")
        defer {
            try? FileManager.default.removeItem(at: kept)
            try? FileManager.default.removeItem(at: lost)
        }
        var options = StoreOptions()
        options.history = HistoryRetention(consumers: ["replication"])
        let store = try Store(directory: kept, models: [Item.self], options: options)
        let publisher = try ReplicationPublisher(
            store: store, url: server.url, name: "kept", historyConsumer: "replication", trimStream: false)
        // Without the consumer: the same outage and compaction take records the publisher never sent.
        let plain = try Store(directory: lost, models: [Item.self])
        let unprotected = try ReplicationPublisher(store: plain, url: server.url, name: "lost")
        try Self.commit(store, count: 100, label: "before")
        try Self.commit(plain, count: 100, label: "before")
        #expect(try publisher.publishPending() == 100)
        #expect(try unprotected.publishPending() == 100)
        publisher.start()
        unprotected.start()
        try server.stop()
        for s in [store, plain] {
            try Self.commit(s, count: 300, label: "during")
            try s.compact()
            try Self.commit(s, count: 50, label: "after")
        }
        try server.start()
        #expect(publisher.waitUntilPublished(450, timeout: .seconds(60)))
        #expect(publisher.stop() && publisher.failure == nil)
        try Self.checkStream(server, name: "kept", directory: kept, records: 450, from: 101)
        // The unprotected publisher stops and says why; its stream keeps the 100 records it sent.
        let deadline = Date(timeIntervalSinceNow: 60)
        while unprotected.failure == nil && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(unprotected.failure?.code == .failed)
        #expect(unprotected.failure?.message.contains("no longer in the journal") == true)
        #expect(unprotected.publishedSequence == 100)
        unprotected.stop()
        try store.close()
        try plain.close()
    }

    @Test func aSecondWriterOnTheSameStreamIsRefused() throws {
        let server = try NATSServer()
        defer { server.tearDown() }
        let first = Self.temporary("fence-a")
        let second = Self.temporary("fence-b")
        defer {
            try? FileManager.default.removeItem(at: first)
            try? FileManager.default.removeItem(at: second)
        }
        // Two copies of one store, published from the same point.
        do {
            let store = try Store(directory: first, models: [Item.self])
            try Self.commit(store, count: 10, label: "common")
            try store.close()
        }
        try FileManager.default.copyItem(at: first, to: second)
        let a = try Store(directory: first, models: [Item.self])
        let b = try Store(directory: second, models: [Item.self])
        let publisherA = try ReplicationPublisher(store: a, url: server.url, name: "fenced")
        let publisherB = try ReplicationPublisher(store: b, url: server.url, name: "fenced")
        #expect(try publisherA.publishPending() == 10)
        // The second copy resumes after the same record, its own: nothing to send, nothing refused yet.
        #expect(try publisherB.publishPending() == 0)
        #expect(publisherB.publishedSequence == 10)

        // Both go on writing; the first to publish extends the stream, the other is refused.
        try Self.commit(a, count: 5, label: "a")
        try Self.commit(b, count: 5, label: "b")
        #expect(try publisherA.publishPending() == 5)
        let refused = #expect(throws: ReplicationError.self) { try publisherB.publishPending() }
        #expect(refused?.code == .fenced)
        #expect(publisherB.failure?.code == .fenced)
        // It stays refused, and a new publisher of the second copy is refused at resume.
        #expect(throws: ReplicationError.self) { try publisherB.publishPending() }
        let later = try ReplicationPublisher(store: b, url: server.url, name: "fenced")
        let again = #expect(throws: ReplicationError.self) { try later.publishPending() }
        #expect(again?.code == .fenced)
        // The stream holds the first writer's records only.
        #expect(publisherA.publishedSequence == 15 && publisherA.failure == nil)
        try Self.checkStream(server, name: "fenced", directory: first, records: 15)
        publisherA.stop()
        publisherB.stop()
        later.stop()
        try a.close()
        try b.close()
    }
}

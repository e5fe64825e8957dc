import Foundation
import Testing
import Trellis
import TrellisReplication

/// `Replica.promote()`: a replica becomes the writer of its stream only once it has applied the stream's last record,
/// and a promotion that races a writer still alive never forks the stream.
@Suite(.serialized) struct PromotionTests {
    typealias Project = ReplicaTests.Project
    typealias Task = ReplicaTests.Task

    static func base() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("trellis-promote-\(UUID())")
    }

    @Test func aReplicaPromotedAfterTheWriterStopsCommitsAndAnotherReplicaFollowsIt() throws {
        let server = try NATSServer()
        defer { server.tearDown() }
        let base = Self.base()
        defer { try? FileManager.default.removeItem(at: base) }
        let writer = try Store(directory: base.appendingPathComponent("writer"), models: [Project.self, Task.self])
        let publisher = try ReplicationPublisher(store: writer, url: server.url, name: "promo")
        publisher.start()
        var live: [(Project, [Task])] = []
        try ReplicaTests.work(ModelContext(writer), count: 200, live: &live, start: 0)
        #expect(publisher.waitUntilPublished(200, timeout: .seconds(60)))

        let replicaURL = base.appendingPathComponent("replica")
        let replica = try Replica(url: server.url, name: "promo", directory: replicaURL)
        replica.start()
        // Another replica, in another process, follows the stream through the change of writer.
        let otherURL = base.appendingPathComponent("other")
        let other = try ReplicaTests.Child(["replica", server.url, "promo", otherURL.path, "--until", "260"])

        // The writer goes away; the replica catches up and is promoted.
        #expect(publisher.stop() && publisher.failure == nil)
        try writer.close()
        #expect(replica.waitUntilApplied(200, timeout: .seconds(60)))
        let promotion = try replica.promote()
        #expect(!promotion.store.isReadOnly)
        #expect(promotion.store.snapshot.sequence == 200)

        // The new writer commits (typed models over the replica's schema) and its publisher extends the stream.
        let context = ModelContext(promotion.store)
        var promotedLive: [(Project, [Task])] = []
        try ReplicaTests.work(context, count: 60, live: &promotedLive, start: 10_000)
        #expect(promotion.publisher.waitUntilPublished(260, timeout: .seconds(60)))
        #expect(promotion.publisher.failure == nil)
        #expect(other.waitForExit(seconds: 120) == 0, "\(other.output)")
        #expect(other.applied == 260)
        #expect(promotion.publisher.stop())
        try promotion.store.close()
        #expect(replica.stop())

        let promotedExport = try ReplicaTests.export(replicaURL)
        #expect(promotedExport.contains("p10050") && promotedExport.contains("p190"))
        #expect(try ReplicaTests.export(otherURL) == promotedExport)
    }

    @Test func aPromotionIsRefusedWhileTheReplicaIsBehindTheStream() throws {
        let server = try NATSServer()
        defer { server.tearDown() }
        let base = Self.base()
        defer { try? FileManager.default.removeItem(at: base) }
        let writer = try Store(directory: base.appendingPathComponent("writer"), models: [Project.self, Task.self])
        let publisher = try ReplicationPublisher(store: writer, url: server.url, name: "behind")
        var live: [(Project, [Task])] = []
        try ReplicaTests.work(ModelContext(writer), count: 100, live: &live, start: 0)
        #expect(try publisher.publishPending() == 100)
        #expect(publisher.stop())
        try writer.close()

        // Not started: it has applied nothing of the 100 records the stream holds.
        let replica = try Replica(url: server.url, name: "behind", directory: base.appendingPathComponent("replica"))
        let refused = #expect(throws: ReplicationError.self) { _ = try replica.promote() }
        #expect(refused?.code == .notCaughtUp)
        #expect(replica.store.isReadOnly && replica.appliedSequence == 0)
        // Still a replica: it follows and, caught up, is promoted.
        replica.start()
        #expect(replica.waitUntilApplied(100, timeout: .seconds(60)))
        let promotion = try replica.promote()
        try promotion.store.write { tx in _ = try tx.insert("Project", ["name": "after"]) }
        #expect(promotion.publisher.waitUntilPublished(101, timeout: .seconds(60)))
        #expect(promotion.publisher.stop())
        try promotion.store.close()
        replica.stop()
    }

    @Test func aPromotionRacingALivingWriterLetsExactlyOneExtendTheStream() throws {
        let server = try NATSServer()
        defer { server.tearDown() }
        let base = Self.base()
        defer { try? FileManager.default.removeItem(at: base) }
        let writerURL = base.appendingPathComponent("writer")
        let writer = try Store(directory: writerURL, models: [Project.self, Task.self])
        let publisher = try ReplicationPublisher(store: writer, url: server.url, name: "race")
        publisher.start()
        var live: [(Project, [Task])] = []
        try ReplicaTests.work(ModelContext(writer), count: 100, live: &live, start: 0)
        #expect(publisher.waitUntilPublished(100, timeout: .seconds(60)))

        let replicaURL = base.appendingPathComponent("replica")
        let replica = try Replica(url: server.url, name: "race", directory: replicaURL)
        replica.start()
        #expect(replica.waitUntilApplied(100, timeout: .seconds(60)))
        // The writer is still alive and publishing: the promotion goes ahead (the replica is caught up) and both
        // commit record 101, with different contents.
        let promotion = try replica.promote()
        try writer.write { tx in _ = try tx.insert("Project", ["name": "old-writer"]) }
        try promotion.store.write { tx in _ = try tx.insert("Project", ["name": "promoted"]) }
        let publishers = [publisher, promotion.publisher]
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        while clock.now < deadline,
            !publishers.allSatisfy({ $0.publishedSequence >= 101 || $0.failure != nil })
        {
            Thread.sleep(forTimeInterval: 0.01)
        }
        // Exactly one extends the stream; the other is refused as fenced and publishes nothing more.
        let failures = publishers.compactMap(\.failure)
        let seen =
            "old: \(publisher.publishedSequence) \(publisher.failure.map(String.init(describing:)) ?? "-"); promoted: "
            + "\(promotion.publisher.publishedSequence) \(promotion.publisher.failure.map(String.init(describing:)) ?? "-")"
        #expect(failures.count == 1, "\(seen)")
        #expect(failures.first?.code == .fenced)
        let winnerIsOld = publisher.failure == nil
        let winner = winnerIsOld ? publisher : promotion.publisher
        let loser = winnerIsOld ? promotion.publisher : publisher
        #expect(winner.publishedSequence == 101 && loser.publishedSequence <= 100, "\(seen)")
        // Both commit more; only the winner's reach the stream.
        for store in [writer, promotion.store] {
            for i in 0..<10 { try store.write { tx in _ = try tx.insert("Project", ["name": .string("more\(i)")]) } }
        }
        #expect(winner.waitUntilPublished(111, timeout: .seconds(60)))
        #expect(loser.publishedSequence <= 100 && loser.failure?.code == .fenced)

        // A new replica follows the one stream: it is the winner's store, object for object.
        let freshURL = base.appendingPathComponent("fresh")
        let fresh = try Replica(url: server.url, name: "race", directory: freshURL)
        fresh.start()
        #expect(fresh.waitUntilApplied(111, timeout: .seconds(60)))
        #expect(fresh.failure == nil)
        #expect(fresh.stop())
        #expect(publisher.stop() && promotion.publisher.stop())
        try writer.close()
        try promotion.store.close()
        replica.stop()
        let freshExport = try ReplicaTests.export(freshURL)
        #expect(freshExport == (try ReplicaTests.export(winnerIsOld ? writerURL : replicaURL)))
        #expect(freshExport.contains(winnerIsOld ? "old-writer" : "promoted"))
        #expect(!freshExport.contains(winnerIsOld ? "promoted" : "old-writer"))
    }
}

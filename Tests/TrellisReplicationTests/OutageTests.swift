import Foundation
import Testing
import Trellis
import TrellisReplication

/// The NATS server goes away for a while: the writer keeps committing locally, and once the server is back (same port,
/// same store directory) the publisher catches up from the journal and replicas in other processes converge.
@Suite(.serialized) struct OutageTests {
    typealias Project = ReplicaTests.Project
    typealias Task = ReplicaTests.Task

    @Test func aServerOutageLeavesCommitsLocalThenThePublisherCatchesUpAndReplicasConverge() throws {
        let server = try NATSServer()
        defer { server.tearDown() }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-outage-\(UUID())")
        defer { try? FileManager.default.removeItem(at: base) }
        let writerURL = base.appendingPathComponent("writer")
        let total: UInt64 = 1_500
        let store = try Store(directory: writerURL, models: [Project.self, Task.self])
        let publisher = try ReplicationPublisher(store: store, url: server.url, name: "outage")
        publisher.start()
        let context = ModelContext(store)
        var live: [(Project, [Task])] = []
        try ReplicaTests.work(context, count: 300, live: &live, start: 0)
        #expect(publisher.waitUntilPublished(300, timeout: .seconds(60)))
        let replicaURLs = [base.appendingPathComponent("replica1"), base.appendingPathComponent("replica2")]
        let replicas = try replicaURLs.map {
            try ReplicaTests.Child(["replica", server.url, "outage", $0.path, "--until", "\(total)"])
        }
        #expect(replicas[0].waitForApplied(300, seconds: 60), "\(replicas[0].output)")

        // The server stops; commits go on, each returning once durable locally (none waits for the server).
        try server.stop()
        try ReplicaTests.work(context, count: 600, live: &live, start: 300)
        #expect(store.snapshot.sequence == 900)
        #expect(publisher.publishedSequence < 900)
        #expect(publisher.failure == nil)
        #expect(replicas.allSatisfy { $0.process.isRunning })

        // Back on the same port and store directory: the stream still holds what it acknowledged, and the publisher
        // resumes after it.
        try server.start()
        try ReplicaTests.work(context, count: Int(total) - 900, live: &live, start: 900)
        #expect(publisher.waitUntilPublished(total, timeout: .seconds(120)), "\(publisher.lastError ?? "")")
        #expect(publisher.failure == nil)
        for replica in replicas {
            #expect(replica.waitForExit(seconds: 180) == 0, "\(replica.output)")
            #expect(replica.applied == total)
        }
        #expect(publisher.stop())
        try store.close()
        let writerExport = try ReplicaTests.export(writerURL)
        #expect(writerExport.contains("\"Task\""))
        for url in replicaURLs {
            #expect(try ReplicaTests.export(url) == writerExport)
        }
    }
}

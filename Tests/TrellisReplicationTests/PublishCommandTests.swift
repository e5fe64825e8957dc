import Foundation
import Testing
import Trellis

/// `trellis publish` (the writer's side from the command line) and `trellis replica`, both in child processes, as the
/// README's "More than one machine" section runs them.
@Suite(.serialized) struct PublishCommandTests {
    @Test func theDemoWriterAndAReplicaInOtherProcessesEndEqual() throws {
        let server = try NATSServer()
        defer { server.tearDown() }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-publish-\(UUID())")
        defer { try? FileManager.default.removeItem(at: base) }
        let writerURL = base.appendingPathComponent("notes")
        let replicaURL = base.appendingPathComponent("notes-replica")
        let writer = try ReplicaTests.Child([
            "publish", writerURL.path, server.url, "notes", "--commits", "120", "--interval", "1",
        ])
        // The replica needs the schema the publisher puts on the server: it starts once something is published.
        #expect(
            writer.waitForLine(seconds: 60) { $0.hasPrefix("published ") && $0 != "published 0" }, "\(writer.output)")
        let replica = try ReplicaTests.Child(["replica", server.url, "notes", replicaURL.path, "--until", "120"])
        #expect(writer.waitForExit(seconds: 120) == 0, "\(writer.output)")
        #expect(writer.output.contains("committed 120\n") && writer.output.contains("published 120\n"))
        #expect(replica.waitForExit(seconds: 120) == 0, "\(replica.output)")
        #expect(replica.applied == 120)
        let export = try ReplicaTests.export(writerURL)
        #expect(export.contains("note 118"))
        #expect(try ReplicaTests.export(replicaURL) == export)

        // An existing store, written elsewhere, published with --exit: the stream resumes after record 120.
        let store = try Store(directory: writerURL, schema: try JournalReader(directory: writerURL).schema())
        for i in 0..<30 {
            try store.write { tx in _ = try tx.insert("Note", ["title": .string("later \(i)"), "edits": 0]) }
        }
        try store.close()
        let publish = try ReplicaTests.Child(["publish", writerURL.path, server.url, "notes", "--exit"])
        #expect(publish.waitForExit(seconds: 120) == 0, "\(publish.output)")
        #expect(publish.output.contains("published 150\n"))
        let again = try ReplicaTests.Child(["replica", server.url, "notes", replicaURL.path, "--until", "150"])
        #expect(again.waitForExit(seconds: 120) == 0, "\(again.output)")
        #expect(try ReplicaTests.export(replicaURL) == (try ReplicaTests.export(writerURL)))
    }

    @Test func aReplicaStartedBeforeItsPublisherWaitsForItThenCatchesUp() throws {
        let server = try NATSServer()
        defer { server.tearDown() }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-publish-\(UUID())")
        defer { try? FileManager.default.removeItem(at: base) }
        let writerURL = base.appendingPathComponent("notes")
        let replicaURL = base.appendingPathComponent("notes-replica")
        // The README's two commands, the replica's first: it waits, creating nothing, until a publisher appears.
        let replica = try ReplicaTests.Child(["replica", server.url, "notes", replicaURL.path, "--until", "40"])
        #expect(replica.waitForLine(seconds: 60) { $0 == "waiting for a publisher of notes" }, "\(replica.output)")
        #expect(!FileManager.default.fileExists(atPath: replicaURL.path))
        let writer = try ReplicaTests.Child([
            "publish", writerURL.path, server.url, "notes", "--commits", "40", "--interval", "1",
        ])
        #expect(writer.waitForExit(seconds: 120) == 0, "\(writer.output)")
        #expect(replica.waitForExit(seconds: 120) == 0, "\(replica.output)")
        #expect(replica.applied == 40)
        #expect(try ReplicaTests.export(replicaURL) == (try ReplicaTests.export(writerURL)))
    }

    @Test func aReplicaStartedBeforeItsServerRetriesUntilTheServerIsUpThenCatchesUp() throws {
        let server = try NATSServer()
        defer { server.tearDown() }
        try server.stop()
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-publish-\(UUID())")
        defer { try? FileManager.default.removeItem(at: base) }
        let writerURL = base.appendingPathComponent("notes")
        let replicaURL = base.appendingPathComponent("notes-replica")
        // The server is down: the replica says so once and keeps trying, creating nothing.
        let replica = try ReplicaTests.Child(["replica", server.url, "notes", replicaURL.path, "--until", "30"])
        #expect(
            replica.waitForLine(seconds: 60) { $0.hasPrefix("cannot reach \(server.url) yet") }, "\(replica.output)")
        Thread.sleep(forTimeInterval: 1)
        #expect(replica.process.isRunning, "\(replica.output)")
        #expect(replica.output.components(separatedBy: "cannot reach").count == 2, "one line, not one per attempt")
        #expect(!FileManager.default.fileExists(atPath: replicaURL.path))
        // The server comes up, then a publisher: the replica waits for it and applies everything.
        try server.start()
        let writer = try ReplicaTests.Child([
            "publish", writerURL.path, server.url, "notes", "--commits", "30", "--interval", "1",
        ])
        #expect(writer.waitForExit(seconds: 120) == 0, "\(writer.output)")
        #expect(replica.waitForExit(seconds: 120) == 0, "\(replica.output)")
        #expect(replica.applied == 30)
        #expect(try ReplicaTests.export(replicaURL) == (try ReplicaTests.export(writerURL)))
    }

    @Test func aServerThatAnswersStartsANewRetryWindow() throws {
        let server = try NATSServer()
        defer { server.tearDown() }
        try server.stop()
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-publish-\(UUID())")
        defer { try? FileManager.default.removeItem(at: base) }
        let writerURL = base.appendingPathComponent("notes")
        let replicaURL = base.appendingPathComponent("notes-replica")
        let replica = try ReplicaTests.Child([
            "replica", server.url, "notes", replicaURL.path, "--until", "5", "--retry", "2",
        ])
        let unreachable = "cannot reach \(server.url) yet"
        #expect(replica.waitForLine(seconds: 60) { $0.hasPrefix(unreachable) }, "\(replica.output)")
        // The server answers, with no publisher yet, for longer than the retry window; then it goes away again.
        try server.start()
        #expect(replica.waitForLine(seconds: 60) { $0 == "waiting for a publisher of notes" }, "\(replica.output)")
        Thread.sleep(forTimeInterval: 3)
        try server.stop()
        // Unreachable again: a new window, announced again, not the first one's expiry.
        let deadline = Date(timeIntervalSinceNow: 60)
        while replica.output.components(separatedBy: unreachable).count < 3 && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(replica.output.components(separatedBy: unreachable).count == 3, "\(replica.output)")
        #expect(replica.process.isRunning, "\(replica.output)")
        try server.start()
        let writer = try ReplicaTests.Child([
            "publish", writerURL.path, server.url, "notes", "--commits", "5", "--interval", "1",
        ])
        #expect(writer.waitForExit(seconds: 120) == 0, "\(writer.output)")
        #expect(replica.waitForExit(seconds: 120) == 0, "\(replica.output)")
        #expect(replica.applied == 5)
    }

    @Test func aReplicaGivesUpOnAnUnreachableServerAfterItsRetryWindow() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-publish-\(UUID())")
        defer { try? FileManager.default.removeItem(at: base) }
        let started = Date()
        let child = try ReplicaTests.Child(["replica", "nats://127.0.0.1:1", "notes", base.path, "--retry", "1"])
        #expect(child.waitForExit(seconds: 60) == 3, "\(child.output)")
        #expect(Date().timeIntervalSince(started) >= 1, "it tried for the second it was given")
        #expect(child.output.contains("cannot reach nats://127.0.0.1:1 yet"))
        #expect(child.output.contains("(tried for 1 s)"), "\(child.output)")
        #expect(!FileManager.default.fileExists(atPath: base.path))
        let atOnce = try ReplicaTests.Child(["replica", "nats://127.0.0.1:1", "notes", base.path, "--retry", "0"])
        #expect(atOnce.waitForExit(seconds: 60) == 3, "\(atOnce.output)")
        #expect(atOnce.output.contains("(tried for 0 s)"), "\(atOnce.output)")
    }

    @Test func publishRefusesADirectoryWithoutAStoreUnlessItWritesTheDemo() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-publish-\(UUID())")
        defer { try? FileManager.default.removeItem(at: base) }
        let child = try ReplicaTests.Child(["publish", base.path, "nats://127.0.0.1:1", "notes"])
        #expect(child.waitForExit(seconds: 30) == 3, "\(child.output)")
        #expect(child.output.contains("no store"))
        #expect(!FileManager.default.fileExists(atPath: base.path))
    }
}

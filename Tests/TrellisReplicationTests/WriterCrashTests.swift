import Foundation
import Testing
import TrellisJournal
import TrellisNATS
import TrellisReplication

#if canImport(Glibc)
import Glibc
#endif

/// The fault "SIGKILL of the writer mid-stream": a `trellis-crashtest run --publish` child commits and
/// publishes, is killed, and a replica holds a prefix of what the writer's journal holds after recovery (never more
/// than what was durable); the writer restarted resumes publishing and the replica converges to it.
@Suite(.serialized) struct WriterCrashTests {
    /// `trellis-crashtest`, next to the test bundle in the products directory.
    static let crashtest: URL = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("trellis-crashtest")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: ".build/debug/trellis-crashtest")
    }()

    /// The last `PREFIX N` line a child printed.
    static func last(_ prefix: String, in output: String) -> UInt64? {
        output.split(separator: "\n").filter { $0.hasPrefix(prefix + " ") }.last.flatMap {
            UInt64($0.dropFirst(prefix.count + 1).prefix { $0.isNumber })
        }
    }

    /// The stream's messages, in order: (record number, frame bytes), large records read from their objects.
    static func streamRecords(_ server: NATSServer, name: String) throws -> [(UInt64, [UInt8])] {
        let connection = try NATSConnection(try NATSOptions(url: server.url))
        defer { connection.close() }
        let js = JetStream(connection)
        let info = try js.streamInfo("TRELLIS_" + name)
        guard info.state.messages > 0 else { return [] }
        var records: [(UInt64, [UInt8])] = []
        for sequence in info.state.firstSequence...info.state.lastSequence {
            let message = try js.message(stream: "TRELLIS_" + name, sequence: sequence)
            let id = try #require(message.headers?["Nats-Msg-Id"].flatMap { UInt64($0) })
            records.append((id, message.payload))
        }
        return records
    }

    @Test func aWriterKilledMidStreamLeavesReplicasAPrefixAndTheyConvergeAfterItsRestart() throws {
        let server = try NATSServer()
        defer { server.tearDown() }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-writer-kill-\(UUID())")
        defer { try? FileManager.default.removeItem(at: base) }
        let writerURL = base.appendingPathComponent("writer")
        let publish = "\(server.url),killed"

        // The writer commits (up to 100,000, far more than it reaches) and publishes until it is killed.
        let writer = try ReplicaTests.Child(
            ["run", "--dir", writerURL.path, "--commits", "100000", "--no-crash-points", "--publish", publish],
            executable: Self.crashtest)
        let deadline = Date(timeIntervalSinceNow: 120)
        var streamed: UInt64 = 0
        // Killed once it has acknowledged 300 commits and the stream holds at least 100 records: mid-stream.
        while Date() < deadline {
            if (Self.last("ack", in: writer.output) ?? 0) >= 300 {
                streamed = try Self.streamRecords(server, name: "killed").last?.0 ?? 0
                if streamed >= 100 { break }
            }
            if !writer.process.isRunning { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        try #require(streamed >= 100, "the writer did not publish 100 records in time: \(writer.output)")
        let replica = try Replica(url: server.url, name: "killed", directory: base.appendingPathComponent("replica"))
        replica.start()
        #expect(writer.sigkill() == SIGKILL)
        let acknowledged = try #require(Self.last("ack", in: writer.output))
        let onStream = try Self.streamRecords(server, name: "killed")
        let lastOnStream = try #require(onStream.last?.0)
        #expect(onStream.map(\.0) == Array(1...lastOnStream))
        #expect(replica.waitUntilApplied(lastOnStream, timeout: .seconds(60)))
        #expect(replica.appliedSequence == lastOnStream && replica.failure == nil)

        // Recovery (a child reopening the writer's store, committing nothing more): the stream and so the replica
        // hold no record the writer's journal lacks, and each record is the writer's own frame, byte for byte.
        let reopen = try ReplicaTests.Child(
            ["run", "--dir", writerURL.path, "--commits", "0", "--no-crash-points"], executable: Self.crashtest)
        #expect(reopen.waitForExit(seconds: 60) == 0)
        let recovered = try #require(Self.last("opened", in: reopen.output))
        #expect(recovered >= acknowledged)
        #expect(lastOnStream <= recovered)
        let reader = DurableFrameReader(directory: writerURL.path, after: 0)
        var frames: [DurableFrame] = []
        while UInt64(frames.count) < lastOnStream {
            let batch = try reader.next(limit: 1000)
            if batch.isEmpty { break }
            frames += batch
        }
        reader.close()
        #expect(frames.count >= onStream.count)
        for ((id, bytes), frame) in zip(onStream, frames) {
            #expect(id == frame.sequence && bytes == frame.bytes)
            if bytes != frame.bytes { break }
        }

        // The writer restarts, commits more, and its publisher resumes after the stream's last record: the replica
        // converges to the writer's store.
        let final = recovered + 100
        let restarted = try ReplicaTests.Child(
            ["run", "--dir", writerURL.path, "--commits", String(final), "--no-crash-points", "--publish", publish],
            executable: Self.crashtest)
        #expect(restarted.waitForExit(seconds: 120) == 0)
        #expect(Self.last("published", in: restarted.output) == final)
        #expect(replica.waitUntilApplied(final, timeout: .seconds(60)))
        #expect(replica.failure == nil)
        #expect(replica.stop())
        #expect(try Self.streamRecords(server, name: "killed").map(\.0) == Array(1...final))
        let writerExport = try ReplicaTests.export(writerURL)
        #expect(!writerExport.isEmpty)
        #expect(try ReplicaTests.export(base.appendingPathComponent("replica")) == writerExport)
    }
}

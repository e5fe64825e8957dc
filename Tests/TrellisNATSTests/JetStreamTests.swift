import Foundation
import Testing
import TrellisNATS

/// JetStream against a real server: streams, acknowledged publishes, deduplication by `Nats-Msg-Id`, the
/// expected-last-sequence fence a second writer hits, pull consumers and reads by sequence.
@Suite struct JetStreamTests {
    /// A server, a connection and a stream `RECORDS` on `trellis.s.rec`.
    struct Setup {
        let server: NATSServerFixture
        let connection: NATSConnection
        let jetStream: JetStream
        let info: StreamInfo

        init() throws {
            server = try NATSServerFixture()
            connection = try NATSConnection(NATSOptions(port: server.port))
            jetStream = JetStream(connection)
            info = try jetStream.createStream(StreamConfig(name: "RECORDS", subjects: ["trellis.s.rec"]))
        }

        func tearDown() {
            connection.close()
            server.tearDown()
        }
    }

    static func frame(_ sequence: Int) -> [UInt8] { Array("record \(sequence)".utf8) + [0, 255, 13, 10] }

    @Test func aStreamIsCreatedDescribedAndDeleted() throws {
        let setup = try Setup()
        defer { setup.tearDown() }
        #expect(setup.info.config.name == "RECORDS")
        #expect(setup.info.config.subjects == ["trellis.s.rec"])
        #expect(setup.info.state.messages == 0)
        #expect(setup.info.state.lastSequence == 0)
        // The same configuration again is accepted; another one under the same name is not.
        _ = try setup.jetStream.createStream(StreamConfig(name: "RECORDS", subjects: ["trellis.s.rec"]))
        #expect {
            _ = try setup.jetStream.createStream(StreamConfig(name: "RECORDS", subjects: ["other"]))
        } throws: { ($0 as? NATSError)?.code == .streamNameInUse }
        _ = try setup.jetStream.publish("trellis.s.rec", payload: Self.frame(1))
        #expect(try setup.jetStream.streamInfo("RECORDS").state.messages == 1)
        // A subject no stream captures has no responder: the publish says so at once.
        #expect { _ = try setup.jetStream.publish("trellis.nowhere", payload: [1]) } throws: {
            ($0 as? NATSError)?.code == .noResponders
        }
        try setup.jetStream.deleteStream("RECORDS")
        #expect { _ = try setup.jetStream.streamInfo("RECORDS") } throws: {
            let error = $0 as? NATSError
            return error?.code == .streamNotFound && error?.apiErrorCode == 10059 && error?.status == 404
        }
        #expect { try setup.jetStream.deleteStream("RECORDS") } throws: { ($0 as? NATSError)?.code == .streamNotFound }
    }

    @Test func publishesAreAcknowledgedInSequenceAndDuplicateIDsAreStoredOnce() throws {
        let setup = try Setup()
        defer { setup.tearDown() }
        for sequence in 1...5 {
            let ack = try setup.jetStream.publish(
                "trellis.s.rec", payload: Self.frame(sequence), options: .init(messageID: String(sequence)))
            #expect(ack.stream == "RECORDS")
            #expect(ack.sequence == UInt64(sequence))
            #expect(!ack.duplicate)
        }
        // A publisher that retries record 3 (its ack was lost, say) is told it is a duplicate of sequence 3.
        let retry = try setup.jetStream.publish("trellis.s.rec", payload: Self.frame(3), options: .init(messageID: "3"))
        #expect(retry.duplicate)
        #expect(retry.sequence == 3)
        let state = try setup.jetStream.streamInfo("RECORDS").state
        #expect(state.messages == 5)
        #expect(state.lastSequence == 5)
    }

    @Test func aSecondWriterWithAStaleLastSequenceIsRefusedWithATypedError() throws {
        let setup = try Setup()
        defer { setup.tearDown() }
        let second = try NATSConnection(NATSOptions(port: setup.server.port))
        defer { second.close() }
        let secondWriter = JetStream(second)
        // Both writers believe the stream ends at 0; the first extends it.
        let first = try setup.jetStream.publish(
            "trellis.s.rec", payload: Self.frame(1), options: .init(messageID: "1", expectedLastSequence: 0))
        #expect(first.sequence == 1)
        // The second writer's record 1 carries another id, so deduplication does not hide it: the fence refuses it.
        var refusal: NATSError?
        do {
            _ = try secondWriter.publish(
                "trellis.s.rec", payload: Array("fork".utf8), options: .init(messageID: "1-b", expectedLastSequence: 0))
        } catch let error as NATSError {
            refusal = error
        }
        let error = try #require(refusal)
        #expect(error.code == .wrongLastSequence)
        #expect(error.apiErrorCode == 10071)
        #expect(error.lastSequence == 1)
        // Nothing was stored; the first writer continues from its own last sequence.
        #expect(try setup.jetStream.streamInfo("RECORDS").state.messages == 1)
        let next = try setup.jetStream.publish(
            "trellis.s.rec", payload: Self.frame(2), options: .init(messageID: "2", expectedLastSequence: 1))
        #expect(next.sequence == 2)
        // The per-subject check fences the same way.
        #expect {
            _ = try secondWriter.publish(
                "trellis.s.rec", payload: [1], options: .init(expectedLastSubjectSequence: 1))
        } throws: { ($0 as? NATSError)?.code == .wrongLastSequence }
        let third = try secondWriter.publish(
            "trellis.s.rec", payload: Self.frame(3), options: .init(expectedLastSubjectSequence: 2))
        #expect(third.sequence == 3)
    }

    @Test func aPullConsumerFetchesInStreamOrderWithSequences() throws {
        let setup = try Setup()
        defer { setup.tearDown() }
        for sequence in 1...25 {
            var options = PublishOptions(messageID: String(sequence))
            options.headers["Trellis-Record"] = String(sequence)
            _ = try setup.jetStream.publish("trellis.s.rec", payload: Self.frame(sequence), options: options)
        }
        let consumer = try setup.jetStream.createConsumer(
            stream: "RECORDS", config: ConsumerConfig(durableName: "replica-1", deliverPolicy: .byStartSequence(6)))
        #expect(consumer.name == "replica-1")
        #expect(consumer.pending == 20)
        var fetched: [JetStreamMessage] = []
        while fetched.count < 20 {
            let batch = try setup.jetStream.fetch(
                stream: "RECORDS", consumer: "replica-1", batch: 8, timeout: .seconds(5))
            #expect(!batch.isEmpty)
            if batch.isEmpty { break }
            for message in batch { try setup.jetStream.ack(message) }
            fetched += batch
        }
        #expect(fetched.map(\.streamSequence) == Array(6...25))
        #expect(fetched.map(\.consumerSequence) == Array(1...20))
        #expect(fetched.map(\.message.payload) == (6...25).map(Self.frame))
        #expect(fetched.map { $0.message.headers?["Trellis-Record"] } == (6...25).map { String($0) })
        #expect(fetched.allSatisfy { $0.stream == "RECORDS" && $0.consumer == "replica-1" && $0.deliveryCount == 1 })
        #expect(fetched.last?.pending == 0)
        #expect(fetched.first?.pending == 19)
        // Nothing left: a fetch returns empty when the server's wait expires.
        let empty = try setup.jetStream.fetch(
            stream: "RECORDS", consumer: "replica-1", batch: 5, timeout: .milliseconds(300))
        #expect(empty.isEmpty)
        try setup.connection.flush()
        #expect(try setup.jetStream.consumerInfo(stream: "RECORDS", consumer: "replica-1").ackPending == 0)
        try setup.jetStream.deleteConsumer(stream: "RECORDS", consumer: "replica-1")
        #expect { _ = try setup.jetStream.consumerInfo(stream: "RECORDS", consumer: "replica-1") } throws: {
            ($0 as? NATSError)?.code == .consumerNotFound
        }
    }

    /// A purge of the messages before sequence 1 removes none (nats-server 2.9 takes a `seq` of 1 as the whole
    /// stream, which emptied a publisher's stream when its checkpoint was record 1); before 3 removes two.
    @Test func aPurgeBeforeTheFirstSequenceKeepsEveryMessage() throws {
        let setup = try Setup()
        defer { setup.tearDown() }
        for sequence in 1...4 {
            _ = try setup.jetStream.publish(
                "trellis.s.rec", payload: Self.frame(sequence), options: PublishOptions(messageID: String(sequence)))
        }
        #expect(try setup.jetStream.purgeStream("RECORDS", before: 1) == 0)
        var info = try setup.jetStream.streamInfo("RECORDS")
        #expect(info.state.messages == 4)
        #expect(info.state.firstSequence == 1)
        #expect(try setup.jetStream.purgeStream("RECORDS", before: 3) == 2)
        info = try setup.jetStream.streamInfo("RECORDS")
        #expect(info.state.messages == 2)
        #expect(info.state.firstSequence == 3)
    }

    /// A no-wait fetch ends on the server's status (408 after fewer messages than asked, 404 when there were none),
    /// not on the client's limit: with a limit of ten minutes, each fetch returns within a minute. Timed inside the
    /// test rather than with a time-limit trait: under CI's parallel load a test can wait minutes for a thread before
    /// its body starts, and the trait counts that wait.
    @Test func aNoWaitFetchEndsOnTheServersStatusNotTheClientsLimit() throws {
        let setup = try Setup()
        defer { setup.tearDown() }
        for sequence in 1...3 {
            _ = try setup.jetStream.publish(
                "trellis.s.rec", payload: Self.frame(sequence), options: PublishOptions(messageID: String(sequence)))
        }
        _ = try setup.jetStream.createConsumer(
            stream: "RECORDS", config: ConsumerConfig(durableName: "replica-1", ackPolicy: .all))
        let clock = ContinuousClock()
        func fetch() throws -> ([JetStreamMessage], Duration) {
            var messages: [JetStreamMessage] = []
            let took = try clock.measure {
                messages = try setup.jetStream.fetch(
                    stream: "RECORDS", consumer: "replica-1", batch: 10, timeout: .seconds(600), noWait: true)
            }
            return (messages, took)
        }
        let (some, first) = try fetch()
        #expect(some.map(\.streamSequence) == [1, 2, 3])
        #expect(some.map(\.message.payload) == (1...3).map(Self.frame))
        if let last = some.last { try setup.jetStream.ack(last) }
        let (none, second) = try fetch()
        #expect(none.isEmpty)
        _ = try setup.jetStream.publish(
            "trellis.s.rec", payload: Self.frame(4), options: PublishOptions(messageID: "4"))
        let (later, third) = try fetch()
        #expect(later.map(\.streamSequence) == [4])
        #expect([first, second, third].allSatisfy { $0 < .seconds(60) }, "fetches took \(first), \(second), \(third)")
    }

    @Test func aStoredMessageIsReadBackBySequence() throws {
        let setup = try Setup()
        defer { setup.tearDown() }
        for sequence in 1...3 {
            _ = try setup.jetStream.publish(
                "trellis.s.rec", payload: Self.frame(sequence), options: .init(messageID: "m\(sequence)"))
        }
        let second = try setup.jetStream.message(stream: "RECORDS", sequence: 2)
        #expect(second.sequence == 2)
        #expect(second.subject == "trellis.s.rec")
        #expect(second.payload == Self.frame(2))
        #expect(second.headers?["Nats-Msg-Id"] == "m2")
        let last = try setup.jetStream.lastMessage(stream: "RECORDS", subject: "trellis.s.rec")
        #expect(last.sequence == 3)
        #expect { _ = try setup.jetStream.message(stream: "RECORDS", sequence: 9) } throws: {
            ($0 as? NATSError)?.code == .messageNotFound
        }
    }
}

import Dispatch
import Foundation
import Testing
import TrellisNATS

/// The core protocol against a real server: publish and subscribe with and without headers, the server's
/// `max_payload` enforced by the client, request/reply with its time limit and no-responders.
@Suite struct CoreProtocolTests {
    @Test func publishedMessagesArriveWithTheirHeadersAndPayloads() throws {
        let server = try NATSServerFixture()
        defer { server.tearDown() }
        let publisher = try NATSConnection(NATSOptions(port: server.port))
        defer { publisher.close() }
        let subscriber = try NATSConnection(NATSOptions(port: server.port))
        defer { subscriber.close() }
        let subscription = try subscriber.subscribe("trellis.test.*")
        try subscriber.flush()

        var headers = NATSHeaders()
        headers["Nats-Msg-Id"] = "17"
        headers["Trellis-Kind"] = "record"
        let payload = (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try publisher.publish("trellis.test.a", payload: payload, headers: headers)
        try publisher.publish("trellis.test.b", payload: Array("plain".utf8))
        try publisher.publish("trellis.other", payload: Array("not matched".utf8))
        try publisher.flush()

        let first = try #require(try subscription.next(timeout: .seconds(5)))
        #expect(first.subject == "trellis.test.a")
        #expect(first.payload == payload)
        #expect(first.headers?["nats-msg-id"] == "17")
        #expect(first.headers?["Trellis-Kind"] == "record")
        #expect(first.headers?.status == nil)
        let second = try #require(try subscription.next(timeout: .seconds(5)))
        #expect(second.subject == "trellis.test.b")
        #expect(second.headers == nil)
        #expect(String(decoding: second.payload, as: UTF8.self) == "plain")
        try subscriber.flush()
        #expect(try subscription.next(timeout: .milliseconds(200)) == nil)
    }

    @Test func aMessageOfExactlyMaxPayloadPassesAndOneByteMoreIsRefused() throws {
        let server = try NATSServerFixture()
        defer { server.tearDown() }
        let connection = try NATSConnection(NATSOptions(port: server.port))
        defer { connection.close() }
        let maxPayload = connection.serverInfo.maxPayload
        #expect(maxPayload == 1_048_576)
        let subscription = try connection.subscribe("big")
        let payload = (0..<maxPayload).map { UInt8(truncatingIfNeeded: $0 % 251) }
        try connection.publish("big", payload: payload)
        let received = try #require(try subscription.next(timeout: .seconds(10)))
        #expect(received.payload == payload)

        #expect {
            try connection.publish("big", payload: payload + [0])
        } throws: { ($0 as? NATSError)?.code == .payloadTooLarge }
        // Headers count towards the limit.
        var headers = NATSHeaders()
        headers["A"] = "b"
        #expect {
            try connection.publish("big", payload: payload, headers: headers)
        } throws: { ($0 as? NATSError)?.code == .payloadTooLarge }
        // The refusal is the client's: the connection is still up and usable.
        try connection.flush()
        #expect(connection.status == .connected)
        #expect(connection.reconnectCount == 0)
    }

    @Test func aRequestIsAnsweredOnItsOwnInbox() throws {
        let server = try NATSServerFixture()
        defer { server.tearDown() }
        let service = try NATSConnection(NATSOptions(port: server.port))
        defer { service.close() }
        let client = try NATSConnection(NATSOptions(port: server.port))
        defer { client.close() }
        let requests = try service.subscribe("double")
        try service.flush()
        let responder = Thread {
            for _ in 0..<3 {
                guard let request = try? requests.next(timeout: .seconds(10)), let reply = request.replyTo else {
                    return
                }
                let number = Int(String(decoding: request.payload, as: UTF8.self)) ?? -1
                try? service.publish(reply, payload: Array(String(number * 2).utf8))
            }
        }
        responder.start()
        for number in [4, 21, 1000] {
            let reply = try client.request("double", payload: Array(String(number).utf8), timeout: .seconds(5))
            #expect(String(decoding: reply.payload, as: UTF8.self) == String(number * 2))
        }
    }

    @Test func aRequestNobodyAnswersTimesOutAndOneNobodyHearsFailsAtOnce() throws {
        let server = try NATSServerFixture()
        defer { server.tearDown() }
        let connection = try NATSConnection(NATSOptions(port: server.port))
        defer { connection.close() }
        // A subscriber that never answers: the request waits its whole time limit.
        let silent = try connection.subscribe("silent")
        try connection.flush()
        let started = ContinuousClock.now
        #expect {
            _ = try connection.request("silent", payload: [1], timeout: .milliseconds(300))
        } throws: { ($0 as? NATSError)?.code == .timeout }
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        #expect(try silent.next(timeout: .seconds(5))?.payload == [1])
        // No subscriber: the server says so (503) instead of the client waiting.
        #expect {
            _ = try connection.request("nobody.home", payload: [], timeout: .seconds(30))
        } throws: { ($0 as? NATSError)?.code == .noResponders }
        #expect(connection.status == .connected)
    }

    @Test func badSubjectsAndHeadersAreRefusedBeforeAnythingIsSent() throws {
        let server = try NATSServerFixture()
        defer { server.tearDown() }
        let connection = try NATSConnection(NATSOptions(port: server.port))
        defer { connection.close() }
        #expect { try connection.publish("two words", payload: []) } throws: {
            ($0 as? NATSError)?.code == .invalidSubject
        }
        #expect { _ = try connection.subscribe("") } throws: { ($0 as? NATSError)?.code == .invalidSubject }
        var headers = NATSHeaders()
        headers["X"] = "line\r\nInjected: yes"
        #expect { try connection.publish("ok", payload: [], headers: headers) } throws: {
            ($0 as? NATSError)?.code == .invalidHeader
        }
        try connection.flush()
        #expect(connection.status == .connected)
    }

    @Test func nothingListeningIsAConnectionFailure() throws {
        let port = try NATSServerFixture.freePort()
        #expect {
            _ = try NATSConnection(NATSOptions(port: port))
        } throws: { ($0 as? NATSError)?.code == .connectionFailed }
    }

    @Test func closingFailsWaitingCallsAndEndsSubscriptions() throws {
        let server = try NATSServerFixture()
        defer { server.tearDown() }
        let connection = try NATSConnection(NATSOptions(port: server.port))
        let subscription = try connection.subscribe("any")
        connection.close()
        #expect(connection.status == .closed)
        #expect { _ = try subscription.next(timeout: .seconds(5)) } throws: { ($0 as? NATSError)?.code == .closed }
        #expect { try connection.publish("any", payload: []) } throws: { ($0 as? NATSError)?.code == .closed }
        #expect { _ = try connection.request("any", payload: [], timeout: .seconds(5)) } throws: {
            ($0 as? NATSError)?.code == .closed
        }
    }
}

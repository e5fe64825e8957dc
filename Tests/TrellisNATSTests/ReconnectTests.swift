import Dispatch
import Foundation
import Synchronization
import Testing
import TrellisNATS

/// The server going away mid-session: waiting calls fail at once with `connectionLost`, the client reports
/// `.disconnected`, reconnects with backoff when the server is back, subscribes again, and JetStream carries on where
/// the stream stopped.
@Suite struct ReconnectTests {
    @Test func theClientReconnectsAfterAServerRestartAndPublishesAgain() throws {
        let server = try NATSServerFixture()
        defer { server.tearDown() }
        let statuses = Mutex<[NATSConnection.Status]>([])
        var options = NATSOptions(port: server.port)
        options.reconnectWait = .milliseconds(20)
        options.maxReconnectWait = .milliseconds(400)
        // The handler runs on the reader thread after the change is visible, so the test waits for it separately.
        let reconnected = DispatchSemaphore(value: 0)
        options.statusHandler = { status in
            statuses.locked { $0.append(status) }
            if status == .connected { reconnected.signal() }
        }
        let connection = try NATSConnection(options)
        defer { connection.close() }
        let jetStream = JetStream(connection)
        _ = try jetStream.createStream(StreamConfig(name: "RECORDS", subjects: ["trellis.s.rec"]))
        for sequence in 1...3 {
            let ack = try jetStream.publish(
                "trellis.s.rec", payload: [UInt8(sequence)],
                options: .init(messageID: String(sequence), expectedLastSequence: UInt64(sequence - 1)))
            #expect(ack.sequence == UInt64(sequence))
        }
        let events = try connection.subscribe("trellis.events")
        let hanging = try connection.subscribe("hang")
        try connection.flush()

        // A request nobody will answer is in flight (its subscriber has seen it) when the server stops.
        let outcome = Mutex<Result<NATSMessage, any Error>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let requester = Thread {
            let result = Result { try connection.request("hang", payload: [42], timeout: .seconds(120)) }
            outcome.locked { $0 = result }
            finished.signal()
        }
        requester.start()
        #expect(try hanging.next(timeout: .seconds(10))?.payload == [42])
        try server.stop()

        #expect(finished.wait(timeout: .now() + .seconds(20)) == .success, "the in-flight request did not fail")
        let result = try #require(outcome.locked { $0 })
        #expect(throws: NATSError.self) { try result.get() }
        if case .failure(let error) = result { #expect((error as? NATSError)?.code == .connectionLost, "\(error)") }
        #expect(connection.waitForStatus(.disconnected, timeout: .seconds(10)))
        #expect {
            _ = try jetStream.publish("trellis.s.rec", payload: [4], options: .init(messageID: "4"))
        } throws: { ($0 as? NATSError)?.code == .notConnected }
        #expect { try connection.publish("trellis.events", payload: [0]) } throws: {
            ($0 as? NATSError)?.code == .notConnected
        }

        try server.start()
        #expect(
            connection.waitForStatus(.connected, timeout: .seconds(20)),
            "no reconnect: \(String(describing: connection.lastError))")
        #expect(connection.reconnectCount == 1)
        #expect(reconnected.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(statuses.locked { $0 } == [.disconnected, .connected])

        // The stream survived on disk; the fence still holds and the writer continues after 3.
        #expect {
            _ = try jetStream.publish(
                "trellis.s.rec", payload: [9], options: .init(messageID: "x", expectedLastSequence: 2))
        } throws: { ($0 as? NATSError)?.code == .wrongLastSequence }
        let ack = try jetStream.publish(
            "trellis.s.rec", payload: [4], options: .init(messageID: "4", expectedLastSequence: 3))
        #expect(ack.sequence == 4)
        #expect(!ack.duplicate)

        // The subscription made before the restart was made again on the new connection.
        let other = try NATSConnection(NATSOptions(port: server.port))
        defer { other.close() }
        try other.publish("trellis.events", payload: Array("after restart".utf8))
        try other.flush()
        #expect(try events.next(timeout: .seconds(10))?.payload == Array("after restart".utf8))
    }

    @Test func aServerThatStopsAnsweringIsDetectedByPingsAndTheClientReconnectsWhenItWakes() throws {
        let server = try NATSServerFixture()
        defer { server.tearDown() }
        var options = NATSOptions(port: server.port)
        options.pingInterval = .milliseconds(250)
        options.maxPingsOutstanding = 2
        options.connectTimeout = .milliseconds(500)
        options.reconnectWait = .milliseconds(20)
        options.maxReconnectWait = .milliseconds(200)
        let connection = try NATSConnection(options)
        defer { connection.close() }
        let hanging = try connection.subscribe("hang")
        try connection.flush()
        #expect(connection.reconnectCount == 0)

        let outcome = Mutex<Result<NATSMessage, any Error>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let requester = Thread {
            let result = Result { try connection.request("hang", payload: [7], timeout: .seconds(120)) }
            outcome.locked { $0 = result }
            finished.signal()
        }
        requester.start()
        #expect(try hanging.next(timeout: .seconds(10))?.payload == [7])
        server.freeze()
        // The connection stays open but silent: the client gives up on it after its pings, failing the request.
        #expect(finished.wait(timeout: .now() + .seconds(20)) == .success, "the request hung on a frozen server")
        if case .failure(let error) = try #require(outcome.locked { $0 }) {
            #expect((error as? NATSError)?.code == .connectionLost, "\(error)")
        } else {
            Issue.record("the request to a frozen server succeeded")
        }
        #expect(connection.waitForStatus(.disconnected, timeout: .seconds(10)))
        #expect(connection.lastError?.code == .connectionLost || connection.lastError?.code == .connectionFailed)
        server.thaw()
        #expect(
            connection.waitForStatus(.connected, timeout: .seconds(20)), "\(String(describing: connection.lastError))")
        #expect(connection.reconnectCount == 1)
        let echo = try connection.subscribe("echo")
        try connection.publish("echo", payload: [1, 2])
        #expect(try echo.next(timeout: .seconds(10))?.payload == [1, 2])
    }

    @Test func aPublishToAServerThatStopsReadingFailsWithinTheWriteTimeout() throws {
        let server = try NATSServerFixture()
        defer { server.tearDown() }
        var options = NATSOptions(port: server.port)
        options.pingInterval = .seconds(600)
        options.writeTimeout = .milliseconds(300)
        let connection = try NATSConnection(options)
        defer { connection.close() }
        try connection.flush()
        server.freeze()
        // The kernel's buffers take a few megabytes; then a write blocks, and fails after the write timeout.
        let payload = [UInt8](repeating: 0x5A, count: connection.serverInfo.maxPayload - 64)
        var failure: NATSError?
        for _ in 0..<1000 {
            do {
                try connection.publish("sink", payload: payload)
            } catch let error as NATSError {
                failure = error
                break
            }
        }
        let error = try #require(failure, "1,000 MiB were taken by a frozen server")
        #expect(error.code == .connectionLost, "\(error)")
        #expect(connection.waitForStatus(.disconnected, timeout: .seconds(10)))
        server.thaw()
        #expect(
            connection.waitForStatus(.connected, timeout: .seconds(20)), "\(String(describing: connection.lastError))")
        try connection.flush()
    }

    @Test func aClientThatRunsOutOfAttemptsCloses() throws {
        let server = try NATSServerFixture()
        defer { server.tearDown() }
        var options = NATSOptions(port: server.port)
        options.reconnectWait = .milliseconds(10)
        options.maxReconnectWait = .milliseconds(40)
        options.maxReconnectAttempts = 3
        let connection = try NATSConnection(options)
        defer { connection.close() }
        let subscription = try connection.subscribe("any")
        try server.stop()
        #expect(connection.waitForStatus(.closed, timeout: .seconds(20)))
        #expect(connection.lastError?.code == .connectionFailed)
        #expect { _ = try subscription.next(timeout: .seconds(5)) } throws: { ($0 as? NATSError)?.code == .closed }
    }
}

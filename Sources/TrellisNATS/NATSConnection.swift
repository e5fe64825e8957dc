import Dispatch
import Foundation
import Synchronization
import TrellisCore

/// A client connection to a NATS server: publish, subscribe, request/reply and flush, over one TCP socket read by a
/// thread of its own.
///
/// When the server goes away the status becomes `.disconnected`, calls waiting for the server fail with
/// `connectionLost`, publishes fail with `notConnected`, and the reader thread reconnects with a doubling pause
/// (`NATSOptions.reconnectWait` up to `maxReconnectWait`), subscribing again to every live subscription. Call
/// `close()` when done: the reader thread holds the connection until then.
///
/// ```swift
/// let connection = try NATSConnection(NATSOptions(port: 4222))
/// defer { connection.close() }
/// let reply = try connection.request("service", payload: Array("ping".utf8), timeout: .seconds(1))
/// ```
public final class NATSConnection: Sendable {
    /// Where the connection stands.
    public enum Status: Sendable, Equatable {
        /// Connected and handshaken; calls go to the server.
        case connected
        /// The server went away; the client is reconnecting.
        case disconnected
        /// Closed by `close()`, or reconnecting gave up.
        case closed
    }

    /// The options the connection was made with.
    public let options: NATSOptions
    /// The prefix of this connection's reply subjects (`_INBOX.<random>`).
    public let inboxPrefix: String
    let state: Mutex<State>
    /// The socket calls write to; nil between connections. Taken before `state` when both are needed, never after.
    let writer: Mutex<Socket?>
    let closeSignal = DispatchSemaphore(value: 0)
    let readerDone = DispatchSemaphore(value: 0)

    struct State {
        var status: Status = .connected
        var info: NATSServerInfo
        var subscriptions: [UInt64: NATSSubscription] = [:]
        var nextSid: UInt64 = 1
        /// One entry per PING sent, in order (PONGs answer them in order): a flush's waiter, or nil for a keepalive.
        var pongWaiters: [Waiter?] = []
        var requests: [UInt64: Waiter] = [:]
        var requestSid: UInt64?
        var nextRequest: UInt64 = 1
        var statusWaiters: [(status: Status, semaphore: DispatchSemaphore)] = []
        var reconnects = 0
        var lastError: NATSError?

        mutating func setStatus(_ new: Status) {
            status = new
            statusWaiters.removeAll { waiter in
                guard waiter.status == new else { return false }
                waiter.semaphore.signal()
                return true
            }
        }

        /// Takes every call waiting for the server, to be failed.
        mutating func takeWaiters() -> [Waiter] {
            defer {
                pongWaiters = []
                requests = [:]
            }
            return pongWaiters.compactMap { $0 } + requests.values
        }
    }

    /// Connects and handshakes (INFO, CONNECT with headers and no-responders, PING/PONG); throws `connectionFailed`
    /// when the server cannot be reached or refuses.
    public init(_ options: NATSOptions) throws {
        let (socket, info, parser) = try Self.handshake(options)
        self.options = options
        self.inboxPrefix = "_INBOX." + NUID.next()
        self.state = Mutex(State(info: info))
        self.writer = Mutex(socket)
        let thread = Thread { [self] in readLoop(socket, parser) }
        thread.name = readerName
        thread.start()
    }

    /// The reader thread's name, unique to the connection, so that `close()` knows when its caller is that thread.
    var readerName: String { "trellis-nats-reader " + inboxPrefix }

    /// The current status.
    public var status: Status { state.locked { $0.status } }

    /// The server's `INFO` (the latest, after reconnects).
    public var serverInfo: NATSServerInfo { state.locked { $0.info } }

    /// How many times the connection was re-established.
    public var reconnectCount: Int { state.locked { $0.reconnects } }

    /// The last error the connection met on its own (a `-ERR` from the server, a failed reconnect), if any.
    public var lastError: NATSError? { state.locked { $0.lastError } }

    /// Waits until the status is `status`; false when `timeout` passed first.
    public func waitForStatus(_ status: Status, timeout: Duration) -> Bool {
        let semaphore = DispatchSemaphore(value: 0)
        let already = state.locked { state in
            if state.status == status { return true }
            state.statusWaiters.append((status, semaphore))
            return false
        }
        if already { return true }
        if semaphore.wait(timeout: .now() + .nanoseconds(Int(clamping: timeout.nanoseconds))) == .success {
            return true
        }
        return state.locked { state in
            state.statusWaiters.removeAll { $0.semaphore === semaphore }
            return state.status == status
        }
    }

    // MARK: Publishing and subscribing

    /// Publishes `payload` (with `headers`, if any, through `HPUB`) to `subject`. Throws `payloadTooLarge` when headers
    /// and payload together exceed the server's `max_payload`, `notConnected` while reconnecting.
    public func publish(
        _ subject: String, payload: [UInt8], headers: NATSHeaders? = nil, replyTo: String? = nil
    ) throws {
        try Self.validate(subject: subject)
        if let replyTo { try Self.validate(subject: replyTo) }
        let headerBytes = try headers?.encoded() ?? []
        let total = headerBytes.count + payload.count
        let maxPayload = state.locked { $0.info.maxPayload }
        guard total <= maxPayload else {
            throw NATSError(
                .payloadTooLarge,
                "a message of \(total) bytes (headers and payload) to \(subject) is over the server's max_payload of "
                    + "\(maxPayload) bytes")
        }
        let reply = replyTo.map { " " + $0 } ?? ""
        let line =
            headers == nil
            ? "PUB \(subject)\(reply) \(total)\r\n" : "HPUB \(subject)\(reply) \(headerBytes.count) \(total)\r\n"
        var bytes = [UInt8]()
        bytes.reserveCapacity(line.utf8.count + total + 2)
        bytes.append(contentsOf: line.utf8)
        bytes.append(contentsOf: headerBytes)
        bytes.append(contentsOf: payload)
        bytes.append(contentsOf: [13, 10])
        try write(bytes)
    }

    /// Subscribes to `subject` (wildcards `*` and `>` allowed), in `queueGroup` if given.
    public func subscribe(_ subject: String, queueGroup: String? = nil) throws -> NATSSubscription {
        try Self.validate(subject: subject)
        if let queueGroup { try Self.validate(subject: queueGroup) }
        let limit = options.subscriptionLimit
        let subscription = try state.locked { state throws(NATSError) in
            guard state.status != .closed else { throw NATSError(.closed, "subscribe to \(subject) after close") }
            let subscription = NATSSubscription(
                subject: subject, queueGroup: queueGroup, sid: state.nextSid, limit: limit)
            state.nextSid += 1
            state.subscriptions[subscription.sid] = subscription
            return subscription
        }
        try writeUnlessReconnecting(Self.subscribeLine(subscription))
        return subscription
    }

    /// Ends `subscription`: the server stops sending, and its `next` throws `subscriptionClosed` once it is empty.
    public func unsubscribe(_ subscription: NATSSubscription) {
        let removed = state.locked { $0.subscriptions.removeValue(forKey: subscription.sid) != nil }
        subscription.end(NATSError(.subscriptionClosed, "unsubscribed from \(subscription.subject)"))
        if removed { try? writeUnlessReconnecting(Array("UNSUB \(subscription.sid)\r\n".utf8)) }
    }

    /// Sends a PING and waits for its PONG: when it returns, the server has processed everything sent before.
    public func flush(timeout: Duration = .seconds(5)) throws {
        let waiter = Waiter("a flush")
        try state.locked { state throws(NATSError) in
            try state.checkConnected()
            state.pongWaiters.append(waiter)
        }
        // A waiter whose PONG never comes stays queued (PONGs answer PINGs in order) until a disconnect fails it.
        try write(Array("PING\r\n".utf8))
        _ = try waiter.wait(timeout: timeout)
    }

    // MARK: Request and reply

    /// Publishes a request with a reply subject of its own and waits for the first answer. Throws `timeout` when none
    /// comes within `timeout`, `noResponders` when nothing subscribes to `subject`, `connectionLost` when the
    /// connection drops while waiting.
    public func request(
        _ subject: String, payload: [UInt8], headers: NATSHeaders? = nil, timeout: Duration
    ) throws -> NATSMessage {
        let waiter = Waiter("a reply on \(subject)")
        let (token, newSid) = try state.locked { state throws(NATSError) in
            try state.checkConnected()
            var newSid: UInt64?
            if state.requestSid == nil {
                state.requestSid = state.nextSid
                newSid = state.nextSid
                state.nextSid += 1
            }
            let token = state.nextRequest
            state.nextRequest += 1
            state.requests[token] = waiter
            return (token, newSid)
        }
        do {
            if let newSid { try writeUnlessReconnecting(Array("SUB \(inboxPrefix).* \(newSid)\r\n".utf8)) }
            try publish(subject, payload: payload, headers: headers, replyTo: "\(inboxPrefix).\(token)")
        } catch {
            state.locked { _ = $0.requests.removeValue(forKey: token) }
            throw error
        }
        let reply: NATSMessage?
        do {
            reply = try waiter.wait(timeout: timeout)
        } catch {
            state.locked { _ = $0.requests.removeValue(forKey: token) }
            throw error
        }
        guard let reply else { throw NATSError(.protocolError, "a reply without a message") }
        if reply.status == 503 { throw NATSError(.noResponders, "no subscriber for requests on \(subject)") }
        return reply
    }

    /// A subject unique to this connection, for replies that come as several messages (JetStream's pull fetch).
    public func newInbox() -> String { "\(inboxPrefix).\(NUID.next())" }

    // MARK: Closing

    /// Closes the connection: calls waiting for the server fail with `closed`, subscriptions end, the reader thread
    /// stops (waited for, up to five seconds). Closing twice does nothing.
    public func close() {
        let taken = state.locked { state -> ([Waiter], [NATSSubscription])? in
            guard state.status != .closed else { return nil }
            state.setStatus(.closed)
            let subscriptions = Array(state.subscriptions.values)
            state.subscriptions = [:]
            return (state.takeWaiters(), subscriptions)
        }
        guard let (waiters, subscriptions) = taken else { return }
        closeSignal.signal()
        let socket = writer.locked { socket in
            defer { socket = nil }
            return socket
        }
        socket?.shutDown()
        let error = NATSError(.closed, "the connection was closed")
        for waiter in waiters { waiter.resolve(.failure(error)) }
        for subscription in subscriptions { subscription.end(error) }
        options.statusHandler?(.closed)
        // From the reader thread itself (a status handler that closes), there is nothing to wait for: it stops on return.
        if Thread.current.name != readerName { _ = readerDone.wait(timeout: .now() + .seconds(5)) }
    }

    // MARK: Writing

    /// Writes `bytes` whole. A write that fails or times out (`writeTimeout`) may have left part of an operation on
    /// the wire, so the connection is shut down: the reader thread sees it end and reconnects.
    func write(_ bytes: [UInt8]) throws {
        let sent = try writer.locked { socket in
            guard let socket else { return false }
            do {
                try socket.send(bytes)
            } catch {
                socket.shutDown()
                throw error
            }
            return true
        }
        if !sent {
            if status == .closed { throw NATSError(.closed, "the connection was closed") }
            throw NATSError(.notConnected, "the client is reconnecting to the server")
        }
    }

    /// Writes, except while reconnecting: what it sends (SUB, UNSUB) is sent again on the new connection.
    func writeUnlessReconnecting(_ bytes: [UInt8]) throws {
        do {
            try write(bytes)
        } catch let error as NATSError where error.code == .notConnected {
        }
    }

    static func subscribeLine(_ subscription: NATSSubscription) -> [UInt8] {
        let queue = subscription.queueGroup.map { " " + $0 } ?? ""
        return Array("SUB \(subscription.subject)\(queue) \(subscription.sid)\r\n".utf8)
    }

    static func validate(subject: String) throws {
        if subject.isEmpty || subject.utf8.contains(where: { $0 <= 32 || $0 == 127 }) {
            throw NATSError(.invalidSubject, "\"\(subject)\" is empty or holds whitespace or control characters")
        }
    }
}

extension NATSConnection.State {
    func checkConnected() throws(NATSError) {
        switch status {
        case .connected: return
        case .disconnected: throw NATSError(.notConnected, "the client is reconnecting to the server")
        case .closed: throw NATSError(.closed, "the connection was closed")
        }
    }
}

/// One call waiting for the server (a request's reply, a flush's PONG), woken by the reader thread.
final class Waiter: Sendable {
    let label: String
    private let semaphore = DispatchSemaphore(value: 0)
    private let result = Mutex<Result<NATSMessage?, NATSError>?>(nil)

    init(_ label: String) { self.label = label }

    func resolve(_ value: Result<NATSMessage?, NATSError>) {
        let first = result.locked { result in
            guard result == nil else { return false }
            result = value
            return true
        }
        if first { semaphore.signal() }
    }

    /// The result, or `timeout` thrown when none came in time.
    func wait(timeout: Duration) throws -> NATSMessage? {
        // The semaphore's clock can end a wait slightly before `ContinuousClock` reaches the deadline: the rest is
        // waited out, so a timeout never comes early.
        let deadline = ContinuousClock.now + timeout
        while true {
            let left = max(Duration.zero, deadline - ContinuousClock.now)
            if semaphore.wait(timeout: .now() + .nanoseconds(Int(clamping: left.nanoseconds))) == .success { break }
            if ContinuousClock.now >= deadline {
                throw NATSError(.timeout, "no answer for \(label) within \(timeout)")
            }
        }
        return try result.locked { $0! }.get()
    }
}

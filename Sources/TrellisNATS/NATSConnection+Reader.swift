import Dispatch
import Foundation
import Synchronization
import TrellisCore

extension NATSConnection {
    /// The largest server operation the reader accepts: a JetStream direct get answers with a message of up to
    /// `max_payload` bytes in base64 inside JSON, so a margin over `max_payload` is needed.
    static func messageBound(_ info: NATSServerInfo) -> Int { 2 * info.maxPayload + 64 * 1024 }

    /// Connects a socket and runs the handshake: reads INFO, sends CONNECT and PING, waits for PONG (or `-ERR`).
    /// Returns the parser holding whatever the server sent after its PONG.
    static func handshake(_ options: NATSOptions) throws -> (Socket, NATSServerInfo, ProtocolParser) {
        let socket = try Socket.connect(
            host: options.host, port: options.port, timeout: options.connectTimeout, writeTimeout: options.writeTimeout)
        do {
            let deadline = ContinuousClock.now + options.connectTimeout
            var parser = ProtocolParser(maxMessageBytes: 64 * 1024)
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            func nextOperation() throws -> ServerOperation {
                while true {
                    if let operation = try parser.next() { return operation }
                    let left = deadline - ContinuousClock.now
                    guard left > .zero, socket.waitReadable(left) else {
                        throw NATSError(
                            .connectionFailed,
                            "the server did not finish the handshake within "
                                + "\(options.connectTimeout)")
                    }
                    let count = socket.receive(into: &chunk)
                    if count == 0 { throw NATSError(.connectionFailed, "the server closed the connection") }
                    parser.append(chunk[0..<count])
                }
            }
            guard case .info(let json) = try nextOperation() else {
                throw NATSError(.connectionFailed, "the server did not start with INFO")
            }
            var info = try decodeInfo(json)
            guard info.headers else {
                throw NATSError(.connectionFailed, "the server (\(info.version)) does not support headers")
            }
            let connect: [String: Any] = [
                "verbose": false, "pedantic": false, "tls_required": false, "name": options.name, "lang": "swift",
                "version": "0.1", "protocol": 1, "headers": true, "no_responders": true, "echo": true,
            ]
            let connectJSON = try JSONSerialization.data(withJSONObject: connect, options: [.sortedKeys])
            try socket.send(Array("CONNECT ".utf8) + Array(connectJSON) + Array("\r\nPING\r\n".utf8))
            handshaking: while true {
                switch try nextOperation() {
                case .pong: break handshaking
                case .ping: try socket.send(Array("PONG\r\n".utf8))
                case .info(let json): info = try decodeInfo(json)
                case .ok: continue
                case .error(let text): throw NATSError(.connectionFailed, "the server refused the connection: \(text)")
                case .message: throw NATSError(.connectionFailed, "a message before the handshake's PONG")
                }
            }
            parser.maxMessageBytes = messageBound(info)
            return (socket, info, parser)
        } catch let error as NATSError {
            socket.close()
            throw error.code == .connectionLost ? NATSError(.connectionFailed, error.message) : error
        } catch {
            socket.close()
            throw NATSError(.connectionFailed, "\(error)")
        }
    }

    static func decodeInfo(_ json: [UInt8]) throws -> NATSServerInfo {
        do {
            return try JSONDecoder().decode(NATSServerInfo.self, from: Data(json))
        } catch {
            throw NATSError(.protocolError, "unreadable INFO: \(String(decoding: json.prefix(200), as: UTF8.self))")
        }
    }

    /// The reader thread: serves each connection until it ends, then reconnects, until closed.
    func readLoop(_ first: Socket, _ firstParser: ProtocolParser) {
        var socket = first
        var parser = firstParser
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let failure = serve(socket, &parser, &chunk)
            writer.locked { current in
                if current?.descriptor == socket.descriptor { current = nil }
            }
            socket.close()
            let waiters = state.locked { state -> [Waiter]? in
                guard state.status != .closed else { return nil }
                state.setStatus(.disconnected)
                state.lastError = failure
                return state.takeWaiters()
            }
            guard let waiters else { break }
            for waiter in waiters {
                waiter.resolve(
                    .failure(NATSError(.connectionLost, "the connection was lost while waiting for \(waiter.label)"))
                )
            }
            options.statusHandler?(.disconnected)
            guard let (next, nextParser) = reconnect() else { break }
            socket = next
            parser = nextParser
        }
        readerDone.signal()
    }

    /// Reads and handles operations until the connection ends; returns why it ended. A connection silent for
    /// `pingInterval` gets a PING; silent through `maxPingsOutstanding` of them, it is taken for dead (a server that
    /// hangs, or a peer gone without closing the connection) and dropped.
    private func serve(_ socket: Socket, _ parser: inout ProtocolParser, _ chunk: inout [UInt8]) -> NATSError {
        var unanswered = 0
        while true {
            do {
                while let operation = try parser.next() { handle(operation) }
            } catch let error as NATSError {
                socket.shutDown()
                return error
            } catch {
                return NATSError(.protocolError, "\(error)")
            }
            if !socket.waitReadable(options.pingInterval) {
                if unanswered >= options.maxPingsOutstanding {
                    socket.shutDown()
                    return NATSError(
                        .connectionLost,
                        "the server sent nothing through \(unanswered) pings, \(options.pingInterval) apart: stale connection"
                    )
                }
                unanswered += 1
                let sent = state.locked { state -> Bool in
                    guard state.status == .connected else { return false }
                    state.pongWaiters.append(nil)
                    return true
                }
                if sent { try? write(Array("PING\r\n".utf8)) }
                continue
            }
            let count = socket.receive(into: &chunk)
            if count == 0 { return NATSError(.connectionLost, "the server closed the connection") }
            unanswered = 0
            parser.append(chunk[0..<count])
        }
    }

    private func handle(_ operation: ServerOperation) {
        switch operation {
        case .ping:
            try? write(Array("PONG\r\n".utf8))
        case .pong:
            let waiter = state.locked { state -> Waiter? in
                state.pongWaiters.isEmpty ? nil : state.pongWaiters.removeFirst()
            }
            waiter?.resolve(.success(nil))
        case .ok:
            break
        case .error(let text):
            state.locked { $0.lastError = NATSError(.serverError, text) }
        case .info(let json):
            if let info = try? Self.decodeInfo(json) { state.locked { $0.info = info } }
        case .message(let message, let sid):
            let prefix = inboxPrefix + "."
            let target = state.locked { state -> Either? in
                if sid == state.requestSid {
                    guard message.subject.hasPrefix(prefix), let token = UInt64(message.subject.dropFirst(prefix.count))
                    else { return nil }
                    return state.requests.removeValue(forKey: token).map(Either.waiter)
                }
                return state.subscriptions[sid].map(Either.subscription)
            }
            switch target {
            case .waiter(let waiter): waiter.resolve(.success(message))
            case .subscription(let subscription): subscription.deliver(message)
            case nil: break
            }
        }
    }

    private enum Either {
        case waiter(Waiter)
        case subscription(NATSSubscription)
    }

    /// Reconnects with a doubling pause, then subscribes again; nil when closed meanwhile or out of attempts.
    private func reconnect() -> (Socket, ProtocolParser)? {
        var pause = options.reconnectWait
        var attempts = 0
        while true {
            if closeSignal.wait(timeout: .now() + .nanoseconds(Int(clamping: pause.nanoseconds))) == .success {
                return nil
            }
            pause = min(pause * 2, options.maxReconnectWait)
            attempts += 1
            do {
                let (socket, info, parser) = try Self.handshake(options)
                writer.locked { $0 = socket }
                let resubscribe = state.locked { state -> [UInt8]? in
                    guard state.status != .closed else { return nil }
                    state.info = info
                    state.reconnects += 1
                    state.setStatus(.connected)
                    var lines = state.subscriptions.values.sorted { $0.sid < $1.sid }.flatMap(Self.subscribeLine)
                    if let sid = state.requestSid { lines += Array("SUB \(inboxPrefix).* \(sid)\r\n".utf8) }
                    return lines
                }
                guard let resubscribe else {
                    writer.locked { $0 = nil }
                    socket.close()
                    return nil
                }
                try? write(resubscribe)
                options.statusHandler?(.connected)
                return (socket, parser)
            } catch {
                let failure = error as? NATSError ?? NATSError(.connectionFailed, "\(error)")
                let giveUp = options.maxReconnectAttempts.map { attempts >= $0 } ?? false
                let closed = state.locked { state -> Bool in
                    state.lastError = failure
                    if giveUp && state.status != .closed {
                        state.setStatus(.closed)
                        let subscriptions = Array(state.subscriptions.values)
                        state.subscriptions = [:]
                        let error = NATSError(.closed, "gave up reconnecting after \(attempts) attempts: \(failure)")
                        for subscription in subscriptions { subscription.end(error) }
                    }
                    return state.status == .closed
                }
                if closed {
                    if giveUp { options.statusHandler?(.closed) }
                    return nil
                }
            }
        }
    }
}

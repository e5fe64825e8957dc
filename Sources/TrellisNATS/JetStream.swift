import Foundation

/// JetStream over a `NATSConnection`: streams, publishing with acknowledgements, pull consumers and direct reads,
/// each a request to the server's `$JS.API.` subjects with a JSON body.
///
/// API errors come back as `NATSError`s with a specific code where the client tells them apart (a wrong expected
/// last sequence is `wrongLastSequence`), and the server's `err_code` in `apiErrorCode`.
///
/// ```swift
/// let jetStream = JetStream(connection)
/// _ = try jetStream.createStream(StreamConfig(name: "RECORDS", subjects: ["trellis.s.rec"]))
/// let ack = try jetStream.publish("trellis.s.rec", payload: frame, options: .init(messageID: "1", expectedLastSequence: 0))
/// ```
public struct JetStream: Sendable {
    /// The connection the API requests go through.
    public let connection: NATSConnection
    /// How long each API request may wait for its answer.
    public var timeout: Duration

    /// JetStream over `connection`, each API request waiting at most `timeout`.
    public init(_ connection: NATSConnection, timeout: Duration = .seconds(5)) {
        self.connection = connection
        self.timeout = timeout
    }

    // MARK: Streams

    /// Creates a stream; throws `streamNameInUse` when one of that name exists with another configuration (the same
    /// configuration again succeeds).
    public func createStream(_ config: StreamConfig) throws -> StreamInfo {
        try call("STREAM.CREATE.\(try Self.checkedName(config.name))", body: config)
    }

    /// The stream's configuration and state; throws `streamNotFound`.
    public func streamInfo(_ name: String) throws -> StreamInfo {
        try call("STREAM.INFO.\(try Self.checkedName(name))", body: Empty())
    }

    /// Deletes the stream and its messages; throws `streamNotFound`.
    public func deleteStream(_ name: String) throws {
        let _: Success = try call("STREAM.DELETE.\(try Self.checkedName(name))", body: Empty())
    }

    /// Removes the stream's messages (those on `subject` only, if given; with `before`, only those of a lower stream
    /// sequence); returns how many went. `before` of 0 or 1 purges nothing: no message is below it (the server's own
    /// request takes a `seq` of 1 as no bound at all and empties the stream, so none is sent).
    @discardableResult
    public func purgeStream(_ name: String, subject: String? = nil, before: UInt64? = nil) throws -> UInt64 {
        if let before, before <= 1 {
            _ = try Self.checkedName(name)
            return 0
        }
        let purged: Purged = try call(
            "STREAM.PURGE.\(try Self.checkedName(name))", body: PurgeRequest(filter: subject, seq: before))
        return purged.purged
    }

    // MARK: Publishing

    /// Publishes to a subject a stream captures and waits for the stream's acknowledgement. `options` carries the
    /// deduplication id (`Nats-Msg-Id`) and the optimistic-concurrency checks: a mismatch throws `wrongLastSequence`
    /// (or `wrongLastMessageID`) and stores nothing. A duplicate id within the stream's window is acknowledged with
    /// `duplicate` set and the first copy's sequence, and stores nothing.
    public func publish(
        _ subject: String, payload: [UInt8], options: PublishOptions = PublishOptions()
    ) throws -> PubAck {
        let reply: NATSMessage
        do {
            reply = try connection.request(subject, payload: payload, headers: options.allHeaders(), timeout: timeout)
        } catch let error as NATSError where error.code == .noResponders {
            throw NATSError(.noResponders, "no stream captures \(subject) (or JetStream is not enabled)")
        }
        if reply.payload.isEmpty, let status = reply.status {
            throw NATSError(
                .jetStreamAPI, "publish to \(subject): status \(status) \(reply.headers?.statusDescription ?? "")")
        }
        return try Self.decode(reply.payload, as: PubAck.self, for: "publish to \(subject)")
    }

    // MARK: Reading by sequence

    /// The stored message of `sequence` (with `nextOnSubject`: the first message on that subject at or after
    /// `sequence`); throws `messageNotFound`.
    public func message(stream: String, sequence: UInt64, nextOnSubject: String? = nil) throws -> StoredMessage {
        let request = MessageGetRequest(seq: sequence, lastBySubject: nil, nextBySubject: nextOnSubject)
        let response: MessageGetResponse = try call("STREAM.MSG.GET.\(try Self.checkedName(stream))", body: request)
        return try response.message.stored()
    }

    /// The last stored message on `subject`; throws `messageNotFound`.
    public func lastMessage(stream: String, subject: String) throws -> StoredMessage {
        let request = MessageGetRequest(seq: nil, lastBySubject: subject, nextBySubject: nil)
        let response: MessageGetResponse = try call("STREAM.MSG.GET.\(try Self.checkedName(stream))", body: request)
        return try response.message.stored()
    }

    // MARK: The API's plumbing

    func call<Response: Decodable>(_ api: String, body: some Encodable) throws -> Response {
        let subject = "$JS.API." + api
        let payload: Data
        do {
            payload = try JSONEncoder().encode(body)
        } catch {
            throw NATSError(.invalidResponse, "cannot encode the request to \(subject): \(error)")
        }
        let reply: NATSMessage
        do {
            reply = try connection.request(subject, payload: Array(payload), timeout: timeout)
        } catch let error as NATSError where error.code == .noResponders {
            throw NATSError(.noResponders, "nothing answers \(subject): is JetStream enabled (nats-server -js)?")
        }
        return try Self.decode(reply.payload, as: Response.self, for: subject)
    }

    /// Decodes an API answer, throwing its `error` member as a `NATSError` when it has one.
    static func decode<Response: Decodable>(
        _ bytes: [UInt8], as type: Response.Type, for what: String
    ) throws
        -> Response
    {
        let data = Data(bytes)
        if let envelope = try? JSONDecoder().decode(ErrorEnvelope.self, from: data), let error = envelope.error {
            throw error.natsError(what)
        }
        do {
            return try JSONDecoder().decode(Response.self, from: data)
        } catch {
            let text = String(decoding: bytes.prefix(300), as: UTF8.self)
            throw NATSError(.invalidResponse, "\(what): unexpected answer \(text) (\(error))")
        }
    }

    /// Stream and consumer names become subject tokens: no dots, wildcards or whitespace.
    static func checkedName(_ name: String) throws -> String {
        if name.isEmpty || name.contains(where: { $0 == "." || $0 == "*" || $0 == ">" || $0.isWhitespace }) {
            throw NATSError(
                .invalidSubject, "\"\(name)\" cannot name a stream or consumer (empty, or holds . * > or space)")
        }
        return name
    }
}

struct Empty: Codable {}

struct Success: Decodable {
    var success: Bool
}

struct PurgeRequest: Encodable {
    var filter: String?
    /// Purges the messages below this stream sequence.
    var seq: UInt64?
}

struct Purged: Decodable {
    var purged: UInt64
}

struct ErrorEnvelope: Decodable {
    var error: APIError?
}

/// JetStream's `{"error": {"code": 400, "err_code": 10071, "description": "wrong last sequence: 5"}}`.
struct APIError: Decodable {
    var code: Int?
    var errCode: Int?
    var description: String?

    enum CodingKeys: String, CodingKey {
        case code, errCode = "err_code", description
    }

    func natsError(_ what: String) -> NATSError {
        let text = description ?? "no description"
        let kind: NATSError.Code
        switch errCode {
        case 10071: kind = .wrongLastSequence
        case 10070: kind = .wrongLastMessageID
        case 10059: kind = .streamNotFound
        case 10058: kind = .streamNameInUse
        case 10014: kind = .consumerNotFound
        case 10037: kind = .messageNotFound
        default: kind = .jetStreamAPI
        }
        var error = NATSError(kind, "\(what): \(text)")
        error.apiErrorCode = errCode
        error.status = code
        if kind == .wrongLastSequence, let number = text.split(separator: " ").last.flatMap({ UInt64($0) }) {
            error.lastSequence = number
        }
        return error
    }
}

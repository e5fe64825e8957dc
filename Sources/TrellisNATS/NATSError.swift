/// Every error the NATS client throws: a code callers can match, a message that says what happened, and for
/// JetStream's API errors the server's codes.
///
/// ```swift
/// do { _ = try jetStream.publish("trellis.s.rec", payload: frame, options: .init(expectedLastSequence: 41)) }
/// catch let error as NATSError where error.code == .wrongLastSequence { print(error.lastSequence ?? 0) }
/// ```
public struct NATSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable, matchable error class; extendable without breaking anyone's `switch`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's text, which is also how it prints.
        public let rawValue: String
        /// A code with this text; codes compare by text.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// The code's text.
        public var description: String { rawValue }

        /// The server could not be reached, or the handshake (INFO, CONNECT, PING/PONG) failed.
        public static let connectionFailed = Code("connection failed")
        /// The client is between connections (reconnecting); nothing was sent.
        public static let notConnected = Code("not connected")
        /// The connection was lost while the call waited for the server: the request may or may not have been
        /// carried out.
        public static let connectionLost = Code("connection lost")
        /// The connection was closed by `close()`, or gave up reconnecting.
        public static let closed = Code("connection closed")
        /// No answer came within the call's time limit.
        public static let timeout = Code("timeout")
        /// A request's subject has no subscriber (the server's 503 status).
        public static let noResponders = Code("no responders")
        /// A message's headers and payload together exceed the server's `max_payload`.
        public static let payloadTooLarge = Code("payload too large")
        /// The server sent `-ERR`.
        public static let serverError = Code("server error")
        /// The server sent bytes the client cannot parse, or an operation larger than the client's bounds.
        public static let protocolError = Code("protocol error")
        /// A subject is empty or holds whitespace.
        public static let invalidSubject = Code("invalid subject")
        /// A header name or value holds a line break, or a name holds a colon.
        public static let invalidHeader = Code("invalid header")
        /// The subscription was unsubscribed, or its connection closed.
        public static let subscriptionClosed = Code("subscription closed")
        /// A JetStream API reply that is not the JSON expected.
        public static let invalidResponse = Code("invalid response")
        /// A JetStream API error without a more specific code here; `apiErrorCode` holds the server's code.
        public static let jetStreamAPI = Code("JetStream API error")
        /// `Nats-Expected-Last-Sequence` or `Nats-Expected-Last-Subject-Sequence` did not match: another writer
        /// extended the stream. `lastSequence` holds the sequence the server has.
        public static let wrongLastSequence = Code("wrong last sequence")
        /// `Nats-Expected-Last-Msg-Id` did not match.
        public static let wrongLastMessageID = Code("wrong last message id")
        /// No stream has that name.
        public static let streamNotFound = Code("stream not found")
        /// A stream of that name exists with another configuration.
        public static let streamNameInUse = Code("stream name already in use")
        /// No consumer has that name on the stream.
        public static let consumerNotFound = Code("consumer not found")
        /// No stored message matches the sequence or subject asked for.
        public static let messageNotFound = Code("message not found")
        /// The object store has no object of that name.
        public static let objectNotFound = Code("object not found")
        /// An object's chunks do not add up to its metadata's size, chunk count or digest.
        public static let objectCorrupt = Code("object corrupt")
    }

    /// The error's class.
    public let code: Code
    /// What happened, to what.
    public let message: String
    /// JetStream's own error number (`err_code`, e.g. 10071 for a wrong last sequence), when the server gave one.
    public var apiErrorCode: Int?
    /// The HTTP-like status of a JetStream API error (400, 404, 503…), when the server gave one.
    public var status: Int?
    /// For `wrongLastSequence`: the stream's (or subject's) actual last sequence, as the server reported it.
    public var lastSequence: UInt64?

    /// An error of this code with this message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `"<code>: <message>"`.
    public var description: String { "\(code): \(message)" }
}

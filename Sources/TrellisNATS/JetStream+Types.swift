import Foundation

/// A stream's configuration, as `$JS.API.STREAM.CREATE` takes it. Durations go over the wire in nanoseconds.
///
/// ```swift
/// var config = StreamConfig(name: "RECORDS", subjects: ["trellis.s.rec"])
/// config.duplicateWindow = .seconds(600)
/// ```
public struct StreamConfig: Sendable, Equatable, Codable {
    /// How long messages are kept.
    public enum Retention: String, Sendable, Codable {
        /// Until a limit (count, bytes, age) removes the oldest.
        case limits
        /// While a consumer has not acknowledged them.
        case interest
        /// Until one consumer acknowledges each.
        case workqueue
    }

    /// Where messages are stored.
    public enum Storage: String, Sendable, Codable {
        /// On disk, in the server's store directory.
        case file
        /// In memory.
        case memory
    }

    /// What happens when a limit is reached.
    public enum Discard: String, Sendable, Codable {
        /// The oldest messages go.
        case old
        /// New messages are refused.
        case new
    }

    /// The stream's name (no dots, wildcards or whitespace).
    public var name: String
    /// The subjects it captures (wildcards allowed).
    public var subjects: [String]
    /// How long messages are kept.
    public var retention: Retention = .limits
    /// Where messages are stored.
    public var storage: Storage = .file
    /// At most this many messages (-1: no limit).
    public var maxMessages: Int64 = -1
    /// At most this many bytes (-1: no limit).
    public var maxBytes: Int64 = -1
    /// Messages older than this go (zero: no limit).
    public var maxAge: Duration = .zero
    /// At most this many messages per subject (-1: no limit).
    public var maxMessagesPerSubject: Int64 = -1
    /// What happens when a limit is reached.
    public var discard: Discard = .old
    /// How long `Nats-Msg-Id`s are remembered for deduplication (zero: the server's default, two minutes).
    public var duplicateWindow: Duration = .zero
    /// Whether `Nats-Rollup` headers may replace a subject's (or the stream's) messages.
    public var allowRollup = false
    /// Whether the direct-get API is served by every replica.
    public var allowDirect = false
    /// Copies kept in a cluster.
    public var replicas = 1

    /// A stream of `name` capturing `subjects`, with the defaults above.
    public init(name: String, subjects: [String]) {
        self.name = name
        self.subjects = subjects
    }

    enum CodingKeys: String, CodingKey {
        case name, subjects, retention, storage, discard
        case maxMessages = "max_msgs", maxBytes = "max_bytes", maxAge = "max_age"
        case maxMessagesPerSubject = "max_msgs_per_subject", duplicateWindow = "duplicate_window"
        case allowRollup = "allow_rollup_hdrs", allowDirect = "allow_direct", replicas = "num_replicas"
    }

    /// Encodes the server's JSON (snake-case names, durations in nanoseconds).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(subjects, forKey: .subjects)
        try container.encode(retention, forKey: .retention)
        try container.encode(storage, forKey: .storage)
        try container.encode(discard, forKey: .discard)
        try container.encode(maxMessages, forKey: .maxMessages)
        try container.encode(maxBytes, forKey: .maxBytes)
        try container.encode(maxAge.nanoseconds, forKey: .maxAge)
        try container.encode(maxMessagesPerSubject, forKey: .maxMessagesPerSubject)
        if duplicateWindow > .zero { try container.encode(duplicateWindow.nanoseconds, forKey: .duplicateWindow) }
        try container.encode(allowRollup, forKey: .allowRollup)
        try container.encode(allowDirect, forKey: .allowDirect)
        try container.encode(replicas, forKey: .replicas)
    }

    /// Decodes the server's JSON; absent members take the defaults above.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        subjects = try container.decodeIfPresent([String].self, forKey: .subjects) ?? []
        retention = try container.decodeIfPresent(Retention.self, forKey: .retention) ?? .limits
        storage = try container.decodeIfPresent(Storage.self, forKey: .storage) ?? .file
        discard = try container.decodeIfPresent(Discard.self, forKey: .discard) ?? .old
        maxMessages = try container.decodeIfPresent(Int64.self, forKey: .maxMessages) ?? -1
        maxBytes = try container.decodeIfPresent(Int64.self, forKey: .maxBytes) ?? -1
        maxAge = .nanoseconds(try container.decodeIfPresent(Int64.self, forKey: .maxAge) ?? 0)
        maxMessagesPerSubject = try container.decodeIfPresent(Int64.self, forKey: .maxMessagesPerSubject) ?? -1
        duplicateWindow = .nanoseconds(try container.decodeIfPresent(Int64.self, forKey: .duplicateWindow) ?? 0)
        allowRollup = try container.decodeIfPresent(Bool.self, forKey: .allowRollup) ?? false
        allowDirect = try container.decodeIfPresent(Bool.self, forKey: .allowDirect) ?? false
        replicas = try container.decodeIfPresent(Int.self, forKey: .replicas) ?? 1
    }
}

/// A stream's configuration and state, as the server reports them.
public struct StreamInfo: Sendable, Equatable, Decodable {
    /// The configuration in force (with the server's defaults filled in).
    public var config: StreamConfig
    /// Its messages now.
    public var state: StreamState
}

/// A stream's counts and sequence range.
public struct StreamState: Sendable, Equatable, Decodable {
    /// Messages stored.
    public var messages: UInt64
    /// Bytes stored.
    public var bytes: UInt64
    /// The first stored message's sequence (0 when empty).
    public var firstSequence: UInt64
    /// The last sequence assigned (0 when nothing was ever stored).
    public var lastSequence: UInt64
    /// Consumers defined on the stream.
    public var consumerCount: Int

    enum CodingKeys: String, CodingKey {
        case messages, bytes, firstSequence = "first_seq", lastSequence = "last_seq", consumerCount = "consumer_count"
    }
}

/// The stream's acknowledgement of a published message.
public struct PubAck: Sendable, Equatable, Decodable {
    /// The stream that stored it.
    public var stream: String
    /// The sequence it was stored at (for a duplicate: the first copy's).
    public var sequence: UInt64
    /// Whether the message was a duplicate of one stored within the stream's window (and was not stored again).
    public var duplicate: Bool

    enum CodingKeys: String, CodingKey {
        case stream, sequence = "seq", duplicate
    }

    /// Decodes `{"stream": …, "seq": …, "duplicate": …}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        stream = try container.decode(String.self, forKey: .stream)
        sequence = try container.decode(UInt64.self, forKey: .sequence)
        duplicate = try container.decodeIfPresent(Bool.self, forKey: .duplicate) ?? false
    }
}

/// The headers that make a JetStream publish idempotent and conditional.
///
/// ```swift
/// let options = PublishOptions(messageID: "42", expectedLastSequence: 41)
/// ```
public struct PublishOptions: Sendable {
    /// `Nats-Msg-Id`: a second message with this id within the stream's duplicate window is not stored again.
    public var messageID: String?
    /// `Nats-Expected-Last-Sequence`: stored only if the stream's last sequence is this.
    public var expectedLastSequence: UInt64?
    /// `Nats-Expected-Last-Subject-Sequence`: stored only if the last message on this subject has this sequence.
    public var expectedLastSubjectSequence: UInt64?
    /// `Nats-Expected-Last-Msg-Id`: stored only if the stream's last message had this id.
    public var expectedLastMessageID: String?
    /// `Nats-Expected-Stream`: stored only if the subject belongs to this stream.
    public var expectedStream: String?
    /// Further headers sent with the message.
    public var headers = NATSHeaders()

    /// Options with the given checks; nil leaves a check out.
    public init(
        messageID: String? = nil, expectedLastSequence: UInt64? = nil, expectedLastSubjectSequence: UInt64? = nil,
        expectedLastMessageID: String? = nil, expectedStream: String? = nil
    ) {
        self.messageID = messageID
        self.expectedLastSequence = expectedLastSequence
        self.expectedLastSubjectSequence = expectedLastSubjectSequence
        self.expectedLastMessageID = expectedLastMessageID
        self.expectedStream = expectedStream
    }

    func allHeaders() -> NATSHeaders? {
        var result = headers
        if let messageID { result["Nats-Msg-Id"] = messageID }
        if let expectedLastSequence { result["Nats-Expected-Last-Sequence"] = String(expectedLastSequence) }
        if let expectedLastSubjectSequence {
            result["Nats-Expected-Last-Subject-Sequence"] = String(expectedLastSubjectSequence)
        }
        if let expectedLastMessageID { result["Nats-Expected-Last-Msg-Id"] = expectedLastMessageID }
        if let expectedStream { result["Nats-Expected-Stream"] = expectedStream }
        return result.fields.isEmpty ? nil : result
    }
}

/// A message read from a stream by sequence (`JetStream.message(stream:sequence:)`).
public struct StoredMessage: Sendable, Equatable {
    /// The subject it was published to.
    public var subject: String
    /// Its sequence in the stream.
    public var sequence: UInt64
    /// Its headers, if it had any.
    public var headers: NATSHeaders?
    /// Its payload.
    public var payload: [UInt8]
}

struct MessageGetRequest: Encodable {
    var seq: UInt64?
    var lastBySubject: String?
    var nextBySubject: String?

    enum CodingKeys: String, CodingKey {
        case seq, lastBySubject = "last_by_subj", nextBySubject = "next_by_subj"
    }
}

struct MessageGetResponse: Decodable {
    var message: RawStoredMessage
}

struct RawStoredMessage: Decodable {
    var subject: String
    var seq: UInt64
    var hdrs: String?
    var data: String?

    func stored() throws -> StoredMessage {
        guard let payload = Data(base64Encoded: data ?? "") else {
            throw NATSError(.invalidResponse, "message \(seq)'s data is not base64")
        }
        var headers: NATSHeaders?
        if let hdrs, !hdrs.isEmpty {
            guard let bytes = Data(base64Encoded: hdrs) else {
                throw NATSError(.invalidResponse, "message \(seq)'s headers are not base64")
            }
            headers = try NATSHeaders(parsing: Array(bytes)[...])
        }
        return StoredMessage(subject: subject, sequence: seq, headers: headers, payload: Array(payload))
    }
}

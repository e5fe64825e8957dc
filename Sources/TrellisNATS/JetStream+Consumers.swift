import Foundation

/// A pull consumer's configuration, as `$JS.API.CONSUMER.CREATE` takes it.
///
/// ```swift
/// let config = ConsumerConfig(durableName: "replica-1", deliverPolicy: .byStartSequence(42))
/// ```
public struct ConsumerConfig: Sendable, Equatable, Encodable {
    /// Where delivery starts.
    public enum DeliverPolicy: Sendable, Equatable {
        /// From the first stored message.
        case all
        /// From the last message.
        case last
        /// Only messages stored after the consumer is made.
        case new
        /// From this stream sequence.
        case byStartSequence(UInt64)
    }

    /// How deliveries are acknowledged.
    public enum AckPolicy: String, Sendable, Equatable {
        /// Each message is acknowledged; unacknowledged ones are delivered again after `ackWait`.
        case explicit
        /// Nothing is acknowledged.
        case none
        /// Acknowledging a message acknowledges every one before it.
        case all
    }

    /// A durable consumer's name (it outlives connections); nil makes an ephemeral one the server removes after
    /// `inactiveThreshold` without fetches.
    public var durableName: String?
    /// Where delivery starts.
    public var deliverPolicy: DeliverPolicy
    /// How deliveries are acknowledged.
    public var ackPolicy: AckPolicy
    /// Only messages on this subject (wildcards allowed), if given.
    public var filterSubject: String?
    /// How long an explicit-ack delivery waits for its ack before it is delivered again.
    public var ackWait: Duration = .seconds(30)
    /// How many unacknowledged deliveries may be outstanding (-1: the server's default).
    public var maxAckPending: Int = -1
    /// How long an ephemeral consumer survives without fetches (zero: the server's default).
    public var inactiveThreshold: Duration = .zero

    /// A pull consumer with these settings.
    public init(
        durableName: String? = nil, deliverPolicy: DeliverPolicy = .all, ackPolicy: AckPolicy = .explicit,
        filterSubject: String? = nil
    ) {
        self.durableName = durableName
        self.deliverPolicy = deliverPolicy
        self.ackPolicy = ackPolicy
        self.filterSubject = filterSubject
    }

    enum CodingKeys: String, CodingKey {
        case durableName = "durable_name", deliverPolicy = "deliver_policy", optStartSeq = "opt_start_seq"
        case ackPolicy = "ack_policy", filterSubject = "filter_subject", ackWait = "ack_wait"
        case maxAckPending = "max_ack_pending", inactiveThreshold = "inactive_threshold"
    }

    /// Encodes the server's JSON (snake-case names, durations in nanoseconds).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(durableName, forKey: .durableName)
        switch deliverPolicy {
        case .all: try container.encode("all", forKey: .deliverPolicy)
        case .last: try container.encode("last", forKey: .deliverPolicy)
        case .new: try container.encode("new", forKey: .deliverPolicy)
        case .byStartSequence(let sequence):
            try container.encode("by_start_sequence", forKey: .deliverPolicy)
            try container.encode(sequence, forKey: .optStartSeq)
        }
        try container.encode(ackPolicy.rawValue, forKey: .ackPolicy)
        try container.encodeIfPresent(filterSubject, forKey: .filterSubject)
        if ackPolicy != .none { try container.encode(ackWait.nanoseconds, forKey: .ackWait) }
        if maxAckPending > 0 { try container.encode(maxAckPending, forKey: .maxAckPending) }
        if inactiveThreshold > .zero { try container.encode(inactiveThreshold.nanoseconds, forKey: .inactiveThreshold) }
    }
}

/// A consumer as the server reports it.
public struct ConsumerInfo: Sendable, Equatable, Decodable {
    /// The stream it reads.
    public var stream: String
    /// Its name (the durable name, or the server's for an ephemeral one).
    public var name: String
    /// Messages not yet delivered.
    public var pending: UInt64
    /// Deliveries not yet acknowledged.
    public var ackPending: UInt64

    enum CodingKeys: String, CodingKey {
        case stream = "stream_name", name, pending = "num_pending", ackPending = "num_ack_pending"
    }
}

/// A message delivered by a consumer, with the position its reply subject (`$JS.ACK.…`) gives.
public struct JetStreamMessage: Sendable, Equatable {
    /// The message as published (subject, headers, payload); its `replyTo` is the ack subject.
    public var message: NATSMessage
    /// The stream it came from.
    public var stream: String
    /// The consumer that delivered it.
    public var consumer: String
    /// Its sequence in the stream.
    public var streamSequence: UInt64
    /// Its sequence among the consumer's deliveries.
    public var consumerSequence: UInt64
    /// How many times it has been delivered (1 the first time).
    public var deliveryCount: UInt64
    /// Messages left for the consumer after this one.
    public var pending: UInt64
    /// When it was stored, in nanoseconds since 1970.
    public var timestamp: Int64

    /// Reads the ack subject: `$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>`, or the longer
    /// form with a domain and account hash in front and a random token behind.
    init(_ message: NATSMessage) throws {
        let reply = message.replyTo ?? ""
        var tokens = reply.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard tokens.count >= 9, tokens[0] == "$JS", tokens[1] == "ACK" else {
            throw NATSError(.invalidResponse, "a delivery whose reply subject is not $JS.ACK…: \(reply)")
        }
        if tokens.count >= 11 { tokens.removeSubrange(2..<4) }  // domain, account hash
        let numbers = tokens[4..<9].map { Int64($0) }
        guard numbers.allSatisfy({ $0 != nil && $0! >= 0 }) else {
            throw NATSError(.invalidResponse, "a delivery whose ack subject has no numbers where expected: \(reply)")
        }
        self.message = message
        stream = tokens[2]
        consumer = tokens[3]
        deliveryCount = UInt64(numbers[0]!)
        streamSequence = UInt64(numbers[1]!)
        consumerSequence = UInt64(numbers[2]!)
        timestamp = numbers[3]!
        pending = UInt64(numbers[4]!)
    }
}

extension JetStream {
    /// Creates (or, for a durable of the same settings, finds) a pull consumer on `stream`.
    public func createConsumer(stream: String, config: ConsumerConfig) throws -> ConsumerInfo {
        let request = CreateConsumerRequest(stream: try Self.checkedName(stream), config: config)
        if let durable = config.durableName {
            return try call("CONSUMER.DURABLE.CREATE.\(stream).\(try Self.checkedName(durable))", body: request)
        }
        return try call("CONSUMER.CREATE.\(stream)", body: request)
    }

    /// The consumer's state; throws `consumerNotFound`.
    public func consumerInfo(stream: String, consumer: String) throws -> ConsumerInfo {
        try call("CONSUMER.INFO.\(try Self.checkedName(stream)).\(try Self.checkedName(consumer))", body: Empty())
    }

    /// Deletes the consumer; throws `consumerNotFound`.
    public func deleteConsumer(stream: String, consumer: String) throws {
        let _: Success = try call(
            "CONSUMER.DELETE.\(try Self.checkedName(stream)).\(try Self.checkedName(consumer))", body: Empty())
    }

    /// Pulls up to `batch` messages, in stream order, waiting at most `timeout` for them: returns as soon as `batch`
    /// have come, or with fewer (possibly none) when the server's wait expires.
    ///
    /// With `noWait`, the server does not wait: it sends what it holds now, up to `batch`, and ends the request at once
    /// with a status (404 when it held nothing, 408 after fewer than `batch`), so the fetch returns without waiting
    /// for `timeout`. A waiting fetch's end relies on the server's 408 at expiry, which nats-server 2.9 sometimes
    /// leaves out when messages arrive as the request expires; the client then waits out its own limit (`timeout`
    /// and a second), so a consumer that keeps up with a busy stream should fetch with `noWait`.
    public func fetch(
        stream: String, consumer: String, batch: Int, timeout: Duration = .seconds(1), noWait: Bool = false
    ) throws
        -> [JetStreamMessage]
    {
        precondition(batch > 0, "a fetch asks for at least one message")
        let subject = "$JS.API.CONSUMER.MSG.NEXT.\(try Self.checkedName(stream)).\(try Self.checkedName(consumer))"
        let inbox = connection.newInbox()
        let subscription = try connection.subscribe(inbox)
        defer { connection.unsubscribe(subscription) }
        let body =
            noWait
            ? "{\"batch\":\(batch),\"no_wait\":true}"
            : "{\"batch\":\(batch),\"expires\":\(max(timeout.nanoseconds, 1_000_000))}"
        try connection.publish(subject, payload: Array(body.utf8), replyTo: inbox)
        // The server ends the wait with a 408 at `expires` (a no-wait request at once); the client's own limit leaves
        // it a second more.
        let deadline = ContinuousClock.now + timeout + .seconds(1)
        var messages: [JetStreamMessage] = []
        while messages.count < batch {
            let left = deadline - ContinuousClock.now
            guard left > .zero, let message = try subscription.next(timeout: left) else {
                if messages.isEmpty && connection.status != .connected {
                    throw NATSError(
                        .connectionLost, "the connection was lost during a fetch from \(stream)/\(consumer)")
                }
                break
            }
            if let status = message.status, message.payload.isEmpty {
                switch status {
                case 100: continue  // A heartbeat.
                case 404, 408: return messages  // No (more) messages, or the wait expired.
                case 409 where messages.isEmpty:
                    throw NATSError(
                        .jetStreamAPI,
                        "fetch from \(stream)/\(consumer): \(status) "
                            + (message.headers?.statusDescription ?? ""))
                default: return messages
                }
            }
            messages.append(try JetStreamMessage(message))
        }
        return messages
    }

    /// Acknowledges a delivery (for explicit-ack consumers), so it is not delivered again.
    public func ack(_ message: JetStreamMessage) throws {
        guard let reply = message.message.replyTo else { return }
        try connection.publish(reply, payload: Array("+ACK".utf8))
    }
}

struct CreateConsumerRequest: Encodable {
    var stream: String
    var config: ConsumerConfig

    enum CodingKeys: String, CodingKey {
        case stream = "stream_name", config
    }
}

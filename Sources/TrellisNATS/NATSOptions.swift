/// Where and how a `NATSConnection` connects, and how it behaves when the server goes away.
///
/// ```swift
/// var options = NATSOptions(host: "127.0.0.1", port: 4222)
/// options.maxReconnectWait = .seconds(5)
/// let connection = try NATSConnection(options)
/// ```
public struct NATSOptions: Sendable {
    /// The server's host name or address.
    public var host: String
    /// The server's client port.
    public var port: Int
    /// The name the client gives in `CONNECT` (the server shows it in its monitoring).
    public var name: String = "trellis"
    /// How long a connection attempt (TCP connect and the INFO/CONNECT/PING handshake) may take.
    public var connectTimeout: Duration = .seconds(2)
    /// How long a write may wait for the server to take bytes before the connection is taken for dead.
    public var writeTimeout: Duration = .seconds(10)
    /// The first pause before reconnecting; each failed attempt doubles it up to `maxReconnectWait`.
    public var reconnectWait: Duration = .milliseconds(50)
    /// The cap of the reconnect pause.
    public var maxReconnectWait: Duration = .seconds(2)
    /// Attempts before giving up and closing; nil retries until `close()`.
    public var maxReconnectAttempts: Int? = nil
    /// How long the connection may be silent before the client sends a PING to check the server is there.
    public var pingInterval: Duration = .seconds(30)
    /// PINGs left unanswered (nothing at all read from the server meanwhile) before the connection is taken for dead
    /// and dropped, which starts a reconnect.
    public var maxPingsOutstanding = 2
    /// Messages a subscription holds unread before it drops newer ones (`NATSSubscription.droppedCount`).
    public var subscriptionLimit = 65_536
    /// Called on the client's reader thread after each change of status; it must not block.
    public var statusHandler: (@Sendable (NATSConnection.Status) -> Void)? = nil

    /// Options for the server at `host:port`, with the defaults above.
    public init(host: String = "127.0.0.1", port: Int = 4222) {
        self.host = host
        self.port = port
    }

    /// Options for a URL of the form `nats://host:port` (or `host:port`; the port defaults to 4222).
    public init(url: String) throws {
        var rest = Substring(url)
        if let scheme = rest.range(of: "://") {
            guard rest[..<scheme.lowerBound] == "nats" else {
                throw NATSError(.connectionFailed, "\(url): only nats:// URLs are supported")
            }
            rest = rest[scheme.upperBound...]
        }
        rest = rest.prefix { $0 != "/" }
        if let colon = rest.lastIndex(of: ":") {
            guard let port = Int(rest[rest.index(after: colon)...]), (1...65535).contains(port) else {
                throw NATSError(.connectionFailed, "\(url): the port is not a number from 1 to 65535")
            }
            self.init(host: String(rest[..<colon]), port: port)
        } else {
            self.init(host: String(rest), port: 4222)
        }
        if host.isEmpty { throw NATSError(.connectionFailed, "\(url): no host") }
    }
}

/// What the server said about itself in its `INFO`.
public struct NATSServerInfo: Sendable, Equatable, Decodable {
    /// The server's unique id.
    public var serverID: String
    /// The server's version (`"2.9.10"`).
    public var version: String
    /// The largest message (headers and payload) the server accepts, in bytes.
    public var maxPayload: Int
    /// Whether the server supports headers (`HPUB`/`HMSG`).
    public var headers: Bool
    /// Whether JetStream is enabled.
    public var jetStream: Bool

    enum CodingKeys: String, CodingKey {
        case serverID = "server_id", version, maxPayload = "max_payload", headers, jetStream = "jetstream"
    }

    /// Decodes the fields above; absent flags are false.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        serverID = try container.decodeIfPresent(String.self, forKey: .serverID) ?? ""
        version = try container.decodeIfPresent(String.self, forKey: .version) ?? ""
        maxPayload = try container.decodeIfPresent(Int.self, forKey: .maxPayload) ?? 1_048_576
        headers = try container.decodeIfPresent(Bool.self, forKey: .headers) ?? false
        jetStream = try container.decodeIfPresent(Bool.self, forKey: .jetStream) ?? false
    }
}

/// A message's headers, as `HPUB` sends and `HMSG` carries them: an optional status line (`NATS/1.0 503`) and
/// ordered name-value fields, a name possibly repeated. Names are matched without regard to case.
///
/// ```swift
/// var headers = NATSHeaders()
/// headers["Nats-Msg-Id"] = "42"
/// try connection.publish("trellis.s.rec", payload: frame, headers: headers)
/// ```
public struct NATSHeaders: Sendable, Equatable {
    /// The fields in order.
    public var fields: [(name: String, value: String)]
    /// The status on the first line, in messages the server makes (503 no responders, 404 no messages, 408 request
    /// timeout…); nil in ordinary messages.
    public var status: Int?
    /// The text after the status, if any (`"Request Timeout"`).
    public var statusDescription: String

    /// Empty headers.
    public init(_ fields: [(name: String, value: String)] = []) {
        self.fields = fields
        self.status = nil
        self.statusDescription = ""
    }

    /// The first value of the field named `name`; setting replaces every field of that name (nil removes them).
    public subscript(name: String) -> String? {
        get { fields.first { $0.name.lowercased() == name.lowercased() }?.value }
        set {
            let index = fields.firstIndex { $0.name.lowercased() == name.lowercased() }
            fields.removeAll { $0.name.lowercased() == name.lowercased() }
            if let newValue { fields.insert((name, newValue), at: min(index ?? fields.count, fields.count)) }
        }
    }

    /// Every value of the fields named `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    /// Headers compare by status and fields, in order.
    public static func == (lhs: NATSHeaders, rhs: NATSHeaders) -> Bool {
        lhs.status == rhs.status && lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// The wire form: `NATS/1.0\r\n`, a `name: value\r\n` line per field, an empty line.
    func encoded() throws -> [UInt8] {
        var text = "NATS/1.0\r\n"
        for (name, value) in fields {
            if name.isEmpty || name.contains(where: { $0 == ":" || $0.isWhitespace }) {
                throw NATSError(.invalidHeader, "header name \"\(name)\" is empty or holds a colon or whitespace")
            }
            if value.contains(where: \.isNewline) {
                throw NATSError(.invalidHeader, "the value of header \(name) holds a line break")
            }
            text += "\(name): \(value)\r\n"
        }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// Parses the wire form; throws `protocolError` when the first line is not `NATS/1.0…`.
    init(parsing bytes: ArraySlice<UInt8>) throws {
        self.init()
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)[...]
        guard let first = lines.popFirst(), first.hasPrefix("NATS/1.0") else {
            throw NATSError(.protocolError, "headers do not start with NATS/1.0")
        }
        let rest = first.dropFirst("NATS/1.0".count).drop { $0 == " " }
        if !rest.isEmpty {
            let parts = rest.split(separator: " ", maxSplits: 1)
            status = Int(parts[0])
            statusDescription = parts.count > 1 ? String(parts[1]) : ""
        }
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else {
                throw NATSError(.protocolError, "header line without a colon: \(line)")
            }
            let name = line[..<colon].trimmingSpaces()
            let value = line[line.index(after: colon)...].trimmingSpaces()
            fields.append((name, value))
        }
    }
}

extension Substring {
    func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

/// A message as delivered to a subscription.
public struct NATSMessage: Sendable, Equatable {
    /// The subject it was published to.
    public var subject: String
    /// The subject to answer on, if the publisher gave one.
    public var replyTo: String?
    /// Its headers, if it was published with `HPUB` (or made by the server, like a status message).
    public var headers: NATSHeaders?
    /// Its payload bytes.
    public var payload: [UInt8]

    /// A message of these parts.
    public init(subject: String, replyTo: String? = nil, headers: NATSHeaders? = nil, payload: [UInt8]) {
        self.subject = subject
        self.replyTo = replyTo
        self.headers = headers
        self.payload = payload
    }

    /// The status of a message the server made (503, 404, 408…), nil otherwise.
    public var status: Int? { headers?.status }
}

/// One operation the server sent.
enum ServerOperation: Sendable, Equatable {
    case info([UInt8])
    case message(NATSMessage, sid: UInt64)
    case ping
    case pong
    case ok
    case error(String)
}

/// Splits the bytes the server sends into operations, however the reads cut them: bytes are appended as they come,
/// and `next()` returns a whole operation or nil until one is complete.
///
/// Bounded: a control line longer than `maxControlLine`, or a message larger than `maxMessageBytes`, is a protocol
/// error (the connection is dropped) rather than a buffer that grows without limit.
struct ProtocolParser {
    var buffer: [UInt8] = []
    var start = 0
    var maxControlLine = 64 * 1024
    var maxMessageBytes: Int

    init(maxMessageBytes: Int) { self.maxMessageBytes = maxMessageBytes }

    /// Bytes not yet returned as operations.
    var pendingCount: Int { buffer.count - start }

    mutating func append(_ bytes: ArraySlice<UInt8>) {
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete operation, or nil when more bytes are needed.
    mutating func next() throws -> ServerOperation? {
        guard let lineEnd = findLineEnd() else {
            if pendingCount > maxControlLine {
                throw NATSError(.protocolError, "a control line longer than \(maxControlLine) bytes")
            }
            return nil
        }
        let line = buffer[start..<lineEnd]
        let afterLine = lineEnd + 2
        let name = line.prefix { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
        switch String(decoding: name, as: UTF8.self).uppercased() {
        case "MSG":
            return try message(line, afterLine: afterLine, withHeaders: false)
        case "HMSG":
            return try message(line, afterLine: afterLine, withHeaders: true)
        case "PING":
            start = afterLine
            return .ping
        case "PONG":
            start = afterLine
            return .pong
        case "+OK":
            start = afterLine
            return .ok
        case "-ERR":
            start = afterLine
            var text = String(decoding: line.dropFirst(4), as: UTF8.self)
            text = Substring(text).trimmingSpaces()
            if text.hasPrefix("'") && text.hasSuffix("'") && text.count >= 2 {
                text = String(text.dropFirst().dropLast())
            }
            return .error(text)
        case "INFO":
            start = afterLine
            return .info(Array(line.dropFirst(4).drop { $0 == UInt8(ascii: " ") }))
        default:
            throw NATSError(.protocolError, "unknown operation \"\(String(decoding: line.prefix(40), as: UTF8.self))\"")
        }
    }

    private func findLineEnd() -> Int? {
        var index = start
        let limit = min(buffer.count - 1, start + maxControlLine + 1)
        while index < limit {
            if buffer[index] == 13 && buffer[index + 1] == 10 { return index }
            index += 1
        }
        return nil
    }

    /// `MSG <subject> <sid> [reply] <size>` or `HMSG <subject> <sid> [reply] <header size> <total size>`, then the
    /// bytes and a line end. Leaves `start` alone until the whole message is there.
    private mutating func message(
        _ line: ArraySlice<UInt8>, afterLine: Int, withHeaders: Bool
    ) throws
        -> ServerOperation?
    {
        let fields = line.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }).map {
            String(decoding: $0, as: UTF8.self)
        }
        let sizes = withHeaders ? 2 : 1
        guard fields.count == 3 + sizes || fields.count == 4 + sizes,
            let sid = UInt64(fields[2]),
            let total = Int(fields[fields.count - 1]), total >= 0
        else {
            throw NATSError(.protocolError, "malformed \(fields.first ?? "MSG") line: \(fields.joined(separator: " "))")
        }
        let headerSize = withHeaders ? Int(fields[fields.count - 2]) ?? -1 : 0
        guard headerSize >= 0 && headerSize <= total else {
            throw NATSError(.protocolError, "malformed HMSG sizes: \(fields.joined(separator: " "))")
        }
        guard total <= maxMessageBytes else {
            throw NATSError(
                .protocolError, "a message of \(total) bytes, over the client's bound of \(maxMessageBytes)")
        }
        guard buffer.count >= afterLine + total + 2 else { return nil }
        guard buffer[afterLine + total] == 13 && buffer[afterLine + total + 1] == 10 else {
            throw NATSError(.protocolError, "a message's \(total) bytes are not followed by a line end")
        }
        let headers = withHeaders ? try NATSHeaders(parsing: buffer[afterLine..<afterLine + headerSize]) : nil
        let payload = Array(buffer[afterLine + headerSize..<afterLine + total])
        let reply = fields.count == 4 + sizes ? fields[3] : nil
        start = afterLine + total + 2
        return .message(NATSMessage(subject: fields[1], replyTo: reply, headers: headers, payload: payload), sid: sid)
    }
}

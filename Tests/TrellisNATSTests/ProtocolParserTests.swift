import Testing

@testable import TrellisNATS

/// The parser of server operations, without a server: whole operations however the bytes are cut, and bounds.
@Suite struct ProtocolParserTests {
    static let stream: [UInt8] = Array(
        ("INFO {\"max_payload\":1048576}\r\nPING\r\nMSG a.b 7  5\r\nhello\r\n+OK\r\n"
            + "HMSG c 9 reply.to 24 27\r\nNATS/1.0\r\nK: v\r\nK: w\r\n\r\nxyz\r\n"
            + "HMSG _INBOX.x.1 3 16 16\r\nNATS/1.0 503\r\n\r\n\r\nPONG\r\n-ERR 'Unknown Protocol Operation'\r\n").utf8)

    static func parse(_ bytes: [UInt8], cut: Int) throws -> [ServerOperation] {
        var parser = ProtocolParser(maxMessageBytes: 1024)
        var operations: [ServerOperation] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + cut, bytes.count)
            parser.append(bytes[offset..<end])
            offset = end
            while let operation = try parser.next() { operations.append(operation) }
        }
        #expect(parser.pendingCount == 0)
        return operations
    }

    @Test(arguments: [1, 2, 3, 7, 64, 10_000])
    func operationsComeOutWholeHoweverTheBytesAreCut(cut: Int) throws {
        let operations = try Self.parse(Self.stream, cut: cut)
        #expect(operations.count == 8)
        #expect(operations[0] == .info(Array("{\"max_payload\":1048576}".utf8)))
        #expect(operations[1] == .ping)
        #expect(operations[2] == .message(NATSMessage(subject: "a.b", payload: Array("hello".utf8)), sid: 7))
        #expect(operations[3] == .ok)
        guard case .message(let withHeaders, let sid) = operations[4] else {
            Issue.record("not a message: \(operations[4])")
            return
        }
        #expect(sid == 9)
        #expect(withHeaders.replyTo == "reply.to")
        #expect(withHeaders.headers?.values("k") == ["v", "w"])
        #expect(withHeaders.payload == Array("xyz".utf8))
        guard case .message(let status, _) = operations[5] else {
            Issue.record("not a message: \(operations[5])")
            return
        }
        #expect(status.status == 503)
        #expect(status.payload.isEmpty)
        #expect(operations[6] == .pong)
        #expect(operations[7] == .error("Unknown Protocol Operation"))
    }

    @Test func aMessageOverTheBoundIsAProtocolError() {
        var parser = ProtocolParser(maxMessageBytes: 1024)
        parser.append(Array("MSG a 1 1025\r\n".utf8)[...])
        #expect { _ = try parser.next() } throws: { ($0 as? NATSError)?.code == .protocolError }
    }

    @Test func anEndlessControlLineIsAProtocolError() {
        var parser = ProtocolParser(maxMessageBytes: 1024)
        parser.maxControlLine = 100
        parser.append([UInt8](repeating: UInt8(ascii: "x"), count: 50)[...])
        #expect(throws: Never.self) { _ = try parser.next() }
        parser.append([UInt8](repeating: UInt8(ascii: "x"), count: 60)[...])
        #expect { _ = try parser.next() } throws: { ($0 as? NATSError)?.code == .protocolError }
    }

    @Test func aPayloadNotFollowedByALineEndIsAProtocolError() {
        var parser = ProtocolParser(maxMessageBytes: 1024)
        parser.append(Array("MSG a 1 3\r\nabcd\r\n".utf8)[...])
        #expect { _ = try parser.next() } throws: { ($0 as? NATSError)?.code == .protocolError }
    }

    @Test func unknownOperationsAndMalformedLinesAreProtocolErrors() {
        for text in ["HELLO\r\n", "MSG a\r\n", "MSG a b 3\r\nabc\r\n", "HMSG a 1 9 3\r\nabc\r\n"] {
            var parser = ProtocolParser(maxMessageBytes: 1024)
            parser.append(Array(text.utf8)[...])
            #expect { _ = try parser.next() } throws: { ($0 as? NATSError)?.code == .protocolError }
        }
    }
}

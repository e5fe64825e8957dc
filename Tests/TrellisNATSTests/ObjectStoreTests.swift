import Foundation
import Testing

@testable import TrellisNATS

/// The object store: a blob of several `max_payload`s goes up in chunks and comes back equal, checked by its digest.
@Suite struct ObjectStoreTests {
    static func blob(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
    }

    @Test func aFiveMegabyteObjectRoundTripsInChunks() throws {
        let server = try NATSServerFixture()
        defer { server.tearDown() }
        let connection = try NATSConnection(NATSOptions(port: server.port))
        defer { connection.close() }
        let jetStream = JetStream(connection)
        let bucket = try ObjectStore(jetStream, bucket: "checkpoints")
        let data = Self.blob(5 * 1024 * 1024 + 123, seed: 7)
        #expect(data.count > 5 * connection.serverInfo.maxPayload)
        let info = try bucket.put("checkpoint-000042", data: data)
        #expect(info.size == UInt64(data.count))
        #expect(info.chunks == (data.count + 128 * 1024 - 1) / (128 * 1024))
        var hash = SHA256()
        hash.update(data)
        #expect(info.digest == "SHA-256=" + ObjectStore.base64URL(hash.finish()))
        #expect(try bucket.get("checkpoint-000042") == data)
        // The stream holds the chunks and one metadata message.
        #expect(try jetStream.streamInfo("OBJ_checkpoints").state.messages == UInt64(info.chunks + 1))

        // Replacing the object stores the new bytes and purges the old chunks.
        let smaller = Self.blob(300_000, seed: 8)
        let replaced = try bucket.put("checkpoint-000042", data: smaller, chunkSize: 100_000)
        #expect(replaced.chunks == 3)
        #expect(replaced.nuid != info.nuid)
        #expect(try bucket.get("checkpoint-000042") == smaller)
        #expect(try jetStream.streamInfo("OBJ_checkpoints").state.messages == 4)
        #expect { _ = try bucket.get("absent") } throws: { ($0 as? NATSError)?.code == .objectNotFound }
        // A chunk size over max_payload is cut down to fit under it, headers included.
        let large = try bucket.put("large-chunks", data: data, chunkSize: 8 * 1024 * 1024)
        let fitting = connection.serverInfo.maxPayload - 1024
        #expect(large.chunks == (data.count + fitting - 1) / fitting)
        #expect(try bucket.get("large-chunks") == data)
        // An empty object has no chunks.
        try bucket.put("empty", data: [])
        #expect(try bucket.get("empty") == [])
    }

    @Test func sha256MatchesTheStandardsVectors() {
        func hex(_ text: String) -> String {
            var hash = SHA256()
            hash.update(Array(text.utf8))
            return hash.finish().map { String($0, radix: 16).leftPadded(2) }.joined()
        }
        #expect(hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        // Fed in pieces that cut blocks anywhere, the digest is the same.
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        var pieces = SHA256()
        var offset = 0
        var step = 1
        while offset < million.count {
            let end = min(offset + step, million.count)
            pieces.update(million[offset..<end])
            offset = end
            step = step * 3 % 1000 + 1
        }
        #expect(
            pieces.finish().map { String($0, radix: 16).leftPadded(2) }.joined()
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

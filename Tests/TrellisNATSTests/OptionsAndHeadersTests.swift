import Testing
import TrellisNATS

/// Server URLs and header fields, without a server.
@Suite struct OptionsAndHeadersTests {
    @Test func urlsGiveTheHostAndPort() throws {
        let full = try NATSOptions(url: "nats://10.0.0.7:4333")
        #expect(full.host == "10.0.0.7")
        #expect(full.port == 4333)
        let bare = try NATSOptions(url: "replica-host")
        #expect(bare.host == "replica-host")
        #expect(bare.port == 4222)
        let withPath = try NATSOptions(url: "nats://localhost:5000/ignored")
        #expect(withPath.host == "localhost")
        #expect(withPath.port == 5000)
        for bad in ["http://host:4222", "nats://host:0", "nats://host:99999", "nats://host:x", "nats://:4222"] {
            #expect(throws: NATSError.self, "\(bad)") { _ = try NATSOptions(url: bad) }
        }
    }

    @Test func headerNamesMatchWithoutCaseAndSettingReplacesEveryValue() {
        var headers = NATSHeaders([("Trellis-A", "1"), ("X", "a"), ("trellis-a", "2")])
        #expect(headers["TRELLIS-A"] == "1")
        #expect(headers.values("Trellis-A") == ["1", "2"])
        headers["Trellis-A"] = "3"
        #expect(headers.values("trellis-a") == ["3"])
        #expect(headers.fields.map(\.name) == ["Trellis-A", "X"])
        headers["X"] = nil
        #expect(headers.fields.count == 1)
        #expect(headers["X"] == nil)
        #expect(headers.status == nil)
    }
}

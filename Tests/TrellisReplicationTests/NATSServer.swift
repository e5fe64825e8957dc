import Foundation
import Testing
import TrellisNATSServer

/// A real `nats-server -js` for one test (TrellisNATSServer's process), started in its own temporary store directory,
/// optionally with a smaller `max_payload`. A missing binary fails the test; it is never skipped.
final class NATSServer: Sendable {
    let server: NATSServerProcess

    var port: Int { server.port }
    var url: String { server.url }

    init(maxPayload: Int? = nil) throws {
        guard NATSServerProcess.isInstalled else {
            Issue.record(
                "\(NATSServerProcess.binary) is missing: install it (apt-get install nats-server) to run these tests")
            throw NATSServerError("nats-server is not installed")
        }
        server = try NATSServerProcess(
            storeDirectory: FileManager.default.temporaryDirectory.appendingPathComponent(
                "trellis-repl-nats-\(UUID())"),
            maxPayload: maxPayload)
        try server.start()
    }

    /// Starts the server again, on the same port and store directory.
    func start() throws { try server.start() }
    /// Stops the server and waits for it to exit.
    func stop() throws { try server.stop() }

    /// Stops the server and removes its store directory.
    func tearDown() {
        do { try server.stop() } catch { Issue.record("\(error)") }
        try? FileManager.default.removeItem(at: server.storeDirectory)
    }
}

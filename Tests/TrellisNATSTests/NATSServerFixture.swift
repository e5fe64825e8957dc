import Foundation
import Testing
import TrellisNATSServer

/// A real `nats-server -js` for one test (TrellisNATSServer's process), started in its own temporary store directory.
/// A missing binary fails the test with what to install; it is never skipped.
final class NATSServerFixture: Sendable {
    let server: NATSServerProcess

    var port: Int { server.port }
    var url: String { server.url }

    init() throws {
        guard NATSServerProcess.isInstalled else {
            Issue.record(
                "\(NATSServerProcess.binary) is missing: install it (apt-get install nats-server) to run the NATS tests"
            )
            throw NATSServerError("nats-server is not installed")
        }
        server = try NATSServerProcess(
            storeDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("trellis-nats-\(UUID())"))
        try server.start()
    }

    /// Starts the server again, on the same port and store directory.
    func start() throws { try server.start() }
    /// Freezes the server (SIGSTOP): connections stay open, nothing answers.
    func freeze() { server.freeze() }
    /// Lets a frozen server run again.
    func thaw() { server.thaw() }
    /// Stops the server and waits for it to exit.
    func stop() throws { try server.stop() }

    /// Stops the server and removes its store directory.
    func tearDown() {
        do { try server.stop() } catch { Issue.record("\(error)") }
        try? FileManager.default.removeItem(at: server.storeDirectory)
    }

    /// A port nothing listens on.
    static func freePort() throws -> Int { try NATSServerProcess.freePort() }
}

import Dispatch
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A real `nats-server -js` for one test, as TrellisNATSTests' fixture: a free port on 127.0.0.1, a store directory
/// of its own, started and waited for (its "Server is ready" line, within ten seconds), stopped at the end. A missing
/// binary fails the test; it is never skipped.
final class NATSServer: Sendable {
    static let binary = "/usr/sbin/nats-server"

    let port: Int
    let storeDirectory: URL
    /// The `max_payload` it is started with (nil: the server's default, 1 MiB).
    let maxPayload: Int?
    private let process = Mutex<Process?>(nil)

    var url: String { "nats://127.0.0.1:\(port)" }

    init(maxPayload: Int? = nil) throws {
        self.maxPayload = maxPayload
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            Issue.record("\(Self.binary) is missing: install it (apt-get install nats-server) to run these tests")
            throw ServerError("nats-server is not installed")
        }
        port = try Self.freePort()
        storeDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-repl-nats-\(UUID())")
        try FileManager.default.createDirectory(at: storeDirectory, withIntermediateDirectories: true)
        try start()
    }

    /// Starts the server (again, same port and store directory) and waits until it is ready.
    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", storeDirectory.path]
        if let maxPayload {
            // The command line has no max_payload flag: a config file beside the store gives it.
            let config = storeDirectory.appendingPathComponent("server.conf")
            try "max_payload: \(maxPayload)\n".write(to: config, atomically: true, encoding: .utf8)
            process.arguments! += ["-c", config.path]
        }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let log = Mutex("")
        let ready = DispatchSemaphore(value: 0)
        let reader = output.fileHandleForReading
        // Drains the log (a full pipe would block the server) and signals its ready line.
        let thread = Thread {
            var signalled = false
            while true {
                let data = reader.availableData
                if data.isEmpty { break }
                let text = log.locked { log in
                    log += String(decoding: data, as: UTF8.self)
                    return log
                }
                if !signalled && text.contains("Server is ready") {
                    signalled = true
                    ready.signal()
                }
            }
            if !signalled { ready.signal() }
        }
        try process.run()
        thread.start()
        if ready.wait(timeout: .now() + .seconds(10)) == .timedOut || !log.locked({ $0.contains("Server is ready") }) {
            process.terminate()
            throw ServerError("nats-server did not become ready within 10 s: \(log.locked { $0 })")
        }
        self.process.locked { $0 = process }
    }

    /// Stops the server (SIGTERM) and waits for it to exit, within ten seconds.
    func stop() throws {
        guard
            let process = process.locked({ process in
                defer { process = nil }
                return process
            })
        else { return }
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        if process.isRunning {
            process.terminate()
            if exited.wait(timeout: .now() + .seconds(10)) == .timedOut {
                kill(process.processIdentifier, SIGKILL)
                throw ServerError("nats-server did not exit within 10 s of SIGTERM")
            }
        }
    }

    /// Stops the server and removes its store directory.
    func tearDown() {
        do { try stop() } catch { Issue.record("\(error)") }
        try? FileManager.default.removeItem(at: storeDirectory)
    }

    /// A port nothing listens on: bound to port 0, read back, released.
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ServerError("socket: \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(descriptor, generic, length) == 0 && getsockname(descriptor, generic, &length) == 0
            }
        }
        guard bound else { throw ServerError("bind: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

struct ServerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

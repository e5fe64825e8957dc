import Dispatch
import Foundation
import Synchronization
import TrellisCore

#if canImport(Glibc)
import Glibc
#endif

/// A real `nats-server -js` as a child process, for the tests and the bench (never shipped): a free port on
/// 127.0.0.1 and a store directory of its own; `start()` waits for the server's "Server is ready" line (ten seconds at
/// most), `stop()` ends it. The tests wrap it in their fixtures, the bench's R1 step uses it directly.
package final class NATSServerProcess: Sendable {
    /// Where Debian's `nats-server` package installs the server.
    package static let binary = "/usr/sbin/nats-server"

    /// Whether the server is installed.
    package static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: binary) }

    /// The port it listens on, on 127.0.0.1.
    package let port: Int
    /// Its JetStream store directory (and, with a payload limit, its config file).
    package let storeDirectory: URL
    /// The `max_payload` it is started with (nil: the server's default, 1 MiB).
    package let maxPayload: Int?
    private let process = Mutex<Process?>(nil)

    /// The URL clients connect to.
    package var url: String { "nats://127.0.0.1:\(port)" }

    /// Picks a free port and makes `storeDirectory`; does not start the server.
    package init(storeDirectory: URL, maxPayload: Int? = nil) throws {
        guard Self.isInstalled else {
            throw NATSServerError("\(Self.binary) is missing: install it (apt-get install nats-server)")
        }
        self.storeDirectory = storeDirectory
        self.maxPayload = maxPayload
        port = try Self.freePort()
        try FileManager.default.createDirectory(at: storeDirectory, withIntermediateDirectories: true)
    }

    /// Starts the server (again, on the same port and store directory) and waits until it is ready.
    package func start() throws {
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
        // Reads the log to its end (so that the server never blocks on a full pipe), signalling the ready line.
        let reader = output.fileHandleForReading
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
            throw NATSServerError("nats-server did not become ready within 10 s: \(log.locked { $0 })")
        }
        self.process.locked { $0 = process }
    }

    /// Freezes the server (SIGSTOP): its connections stay open but nothing answers, as when a server hangs or a peer
    /// vanishes without closing the connection.
    package func freeze() {
        if let process = process.locked({ $0 }) { kill(process.processIdentifier, SIGSTOP) }
    }

    /// Lets a frozen server run again (SIGCONT).
    package func thaw() {
        if let process = process.locked({ $0 }) { kill(process.processIdentifier, SIGCONT) }
    }

    /// Stops the server (SIGTERM, after SIGCONT in case it is frozen) and waits for it to exit; SIGKILL and an error
    /// after ten seconds.
    package func stop() throws {
        guard
            let process = process.locked({ process in
                defer { process = nil }
                return process
            })
        else { return }
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        if process.isRunning {
            kill(process.processIdentifier, SIGCONT)
            process.terminate()
            if exited.wait(timeout: .now() + .seconds(10)) == .timedOut {
                kill(process.processIdentifier, SIGKILL)
                throw NATSServerError("nats-server did not exit within 10 s of SIGTERM")
            }
        }
    }

    /// A port nothing listens on: bound to port 0, read back, released.
    package static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw NATSServerError("socket: errno \(errno)") }
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
        guard bound else { throw NATSServerError("bind: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Why the server could not be started or stopped.
package struct NATSServerError: Error, CustomStringConvertible {
    /// What went wrong, with the server's log when it did not become ready.
    package let description: String
    package init(_ description: String) { self.description = description }
}

import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The K harness of the crash matrix: runs the built `trellis-crashtest` executable as a child process and kills it
/// with SIGKILL after a delay, or lets it kill itself at a named point (`TRELLIS_CRASH_AT`).
///
/// The child writes its lines (`opened K`, `ack N`, …) straight to a file, so every line it printed is there after
/// the kill.
struct CrashChild {
    struct Outcome {
        var lines: [String]
        /// Whether SIGKILL ended it (sent by the test or by itself).
        var killed: Bool
        var exitStatus: Int32
        /// The last `ack N`, or what it `opened` with when it acknowledged nothing.
        var acknowledged: Int
        var opened: Int?
    }

    /// Whether the child's output holds an `ack` line yet.
    static func hasAck(_ output: URL) throws -> Bool {
        let text = String(decoding: try Data(contentsOf: output), as: UTF8.self)
        return text.hasPrefix("ack ") || text.contains("\nack ")
    }

    static let executable: URL = {
        if let path = ProcessInfo.processInfo.environment["TRELLIS_CRASHTEST"] { return URL(fileURLWithPath: path) }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        // The test bundle of `swift test` lives inside the products directory, next to the executables.
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("trellis-crashtest")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: ".build/debug/trellis-crashtest")
    }()

    /// Runs the child with `arguments`; kills it after `killAfter` seconds if it still runs (counted from its first
    /// `ack` line when `afterFirstAck`, so that the kill lands while it commits, not while it opens). A child still
    /// running after `timeout` seconds, or that acknowledges nothing within it when `afterFirstAck`, is a hang: it is
    /// killed and the test fails.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], killAfter: Double? = nil,
        afterFirstAck: Bool = false, timeout: Double = 120, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Outcome {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("crashtest-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        if afterFirstAck, killAfter != nil {
            let deadline = Date().addingTimeInterval(timeout)
            while !(try Self.hasAck(output)) {
                if ended.wait(timeout: .now() + 0.002) == .success {
                    ended.signal()  // it ended first: the wait below sees that again
                    break
                }
                if Date() > deadline {
                    kill(process.processIdentifier, SIGKILL)
                    ended.wait()
                    Issue.record(
                        "trellis-crashtest \(arguments) acknowledged nothing in \(timeout) s",
                        sourceLocation: sourceLocation)
                    break
                }
            }
        }
        if let killAfter {
            // A child that ends before the kill has already signalled `ended`: waiting for it again would hang.
            if ended.wait(timeout: .now() + killAfter) == .timedOut {
                kill(process.processIdentifier, SIGKILL)
                ended.wait()
            }
        } else if ended.wait(timeout: .now() + timeout) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            ended.wait()
            Issue.record("trellis-crashtest \(arguments) hung for \(timeout) s", sourceLocation: sourceLocation)
        }
        let text = try String(contentsOf: output, encoding: .utf8)
        let lines = text.split(separator: "\n").map(String.init)
        let killed = process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
        let opened = lines.first { $0.hasPrefix("opened ") }.flatMap { Int($0.dropFirst(7)) }
        let lastAck = lines.last { $0.hasPrefix("ack ") }.flatMap { Int($0.dropFirst(4)) }
        return Outcome(
            lines: lines, killed: killed, exitStatus: process.terminationStatus,
            acknowledged: lastAck ?? opened ?? 0, opened: opened)
    }
}

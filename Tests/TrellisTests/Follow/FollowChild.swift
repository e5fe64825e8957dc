import Foundation
import Synchronization
import Testing

@testable import TrellisCore

#if canImport(Glibc)
import Glibc
#endif

/// A writer in a child process (the built `trellis-crashtest`) that runs while the test follows it: unlike
/// `CrashChild.run`, `start` returns at once, and the test reads the lines so far, waits for one, or kills it.
final class FollowChild {
    let process = Process()
    let output: URL
    private let ended = DispatchSemaphore(value: 0)

    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        output = FileManager.default.temporaryDirectory.appendingPathComponent("follow-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        process.executableURL = CrashChild.executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        process.terminationHandler = { [ended] _ in ended.signal() }
        try process.run()
    }

    deinit {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: output)
    }

    /// Whether the child has exited (or was killed).
    var isFinished: Bool { !process.isRunning }

    /// The whole lines the child printed so far.
    var lines: [String] {
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        if !text.hasSuffix("\n"), !lines.isEmpty { lines.removeLast() }
        return lines
    }

    /// The `ack N T` lines so far: sequence number and the monotonic time the commit returned (0 without `--times`).
    var acks: [(sequence: UInt64, time: UInt64)] {
        lines.compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.first == "ack", parts.count >= 2, let n = UInt64(parts[1]) else { return nil }
            return (n, parts.count > 2 ? UInt64(parts[2]) ?? 0 : 0)
        }
    }

    /// The sequence number the child recovered (`opened K`), once it printed it.
    var opened: UInt64? { lines.first { $0.hasPrefix("opened ") }.flatMap { UInt64($0.dropFirst(7)) } }

    /// Kills the child with SIGKILL and waits for it to end.
    func kill() {
        if !isFinished { Glibc.kill(process.processIdentifier, SIGKILL) }
        ended.wait()
        ended.signal()
    }

    /// Waits up to `seconds` for the child to exit by itself; kills it and returns false when it does not.
    func waitForExit(within seconds: Double) -> Bool {
        if ended.wait(timeout: .now() + seconds) == .success {
            ended.signal()
            return true
        }
        kill()
        return false
    }

    /// Nanoseconds of `CLOCK_MONOTONIC`, the clock the child's `--times` use.
    static func now() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}

/// What a follower's observer saw, commit by commit, with the time it saw each and anything that was wrong with one.
final class SeenCommits: Sendable {
    private struct Contents {
        var sequences: [UInt64] = []
        var times: [UInt64: UInt64] = [:]
        var problems: [String] = []
    }

    private let contents = Mutex(Contents())

    func record(_ sequence: UInt64, problem: String? = nil) {
        let now = FollowChild.now()
        contents.locked { c in
            if let last = c.sequences.last, sequence != last + 1 {
                c.problems.append("commit \(sequence) after \(last)")
            }
            c.sequences.append(sequence)
            c.times[sequence] = now
            if let problem { c.problems.append(problem) }
        }
    }

    var last: UInt64 { contents.locked { $0.sequences.last ?? 0 } }
    var sequences: [UInt64] { contents.locked { $0.sequences } }
    var problems: [String] { contents.locked { $0.problems } }
    var times: [UInt64: UInt64] { contents.locked { $0.times } }

    /// The follow latency of each acknowledged commit seen: the follower's time minus the writer's `ack` time, in
    /// microseconds, sorted.
    func latencies(_ acks: [(sequence: UInt64, time: UInt64)]) -> [Double] {
        let times = self.times
        return acks.compactMap { ack -> Double? in
            guard ack.time > 0, let seen = times[ack.sequence] else { return nil }
            return Double(Int64(bitPattern: seen &- ack.time)) / 1_000
        }.sorted()
    }

    /// "p50 X µs, p99 Y µs, max Z µs over N commits".
    static func summary(_ sorted: [Double]) -> String {
        guard !sorted.isEmpty else { return "no commits" }
        func p(_ q: Double) -> String {
            String(format: "%.0f", sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))])
        }
        return "p50 \(p(0.5)) µs, p90 \(p(0.9)) µs, p99 \(p(0.99)) µs, max \(p(1)) µs over \(sorted.count) commits"
    }
}

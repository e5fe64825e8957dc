import Foundation
import Testing

/// What one run of the `trellis` binary did.
struct ToolResult: CustomStringConvertible {
    let status: Int32
    let stdout: String
    let stderr: String

    var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }

    /// stdout parsed as one JSON object (the `--json` contract).
    func json() throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(stdout.utf8))
        return try #require(object as? [String: Any], "stdout is not a JSON object:\n\(stdout)")
    }
}

/// Runs the `trellis` binary that `swift build` put next to this test bundle.
enum Tool {
    /// Where the binary is: `$TRELLIS_BINARY` if set, else the build directory holding the test bundle (found from
    /// the bundle, the test executable, or this file's path), the way `swift test` and `swift build` lay it out.
    static let binary: URL? = {
        let fm = FileManager.default
        if let path = ProcessInfo.processInfo.environment["TRELLIS_BINARY"] { return URL(fileURLWithPath: path) }
        var directories: [URL] = []
        for bundle in [Bundle.main] + Bundle.allBundles {
            directories.append(bundle.bundleURL.deletingLastPathComponent())
            directories.append(bundle.bundleURL)
            if let exe = bundle.executableURL { directories.append(exe.deletingLastPathComponent()) }
        }
        directories.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        // Tests/TrellisToolTests/Support/ToolRunner.swift → the package root's .build/debug.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        directories.append(root.appendingPathComponent(".build/debug"))
        for directory in directories {
            let candidate = directory.appendingPathComponent("trellis")
            var isDirectory: ObjCBool = false
            if fm.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                fm.isExecutableFile(atPath: candidate.path)
            {
                return candidate
            }
        }
        return nil
    }()

    /// Runs `trellis arguments…`; `stdin` is what it reads (nil: an empty input, as from /dev/null), `environment`
    /// is added to this process's. Output goes to files rather than pipes so that a large output can never block the
    /// child while we wait for it.
    static func run(
        _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]
    ) throws -> ToolResult {
        let binary = try #require(Tool.binary, "no trellis binary next to the tests; run `swift build` first")
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("out")
        let errURL = scratch.appendingPathComponent("err")
        let inURL = scratch.appendingPathComponent("in")
        try Data().write(to: outURL)
        try Data().write(to: errURL)
        try Data((stdin ?? "").utf8).write(to: inURL)

        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        process.standardInput = try FileHandle(forReadingFrom: inURL)
        try process.run()
        process.waitUntilExit()
        return ToolResult(
            status: process.terminationStatus,
            stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }
}

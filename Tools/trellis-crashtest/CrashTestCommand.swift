import Foundation
import Trellis

/// The command line of `trellis-crashtest`, parsed by hand (the package takes no dependencies).
///
///     trellis-crashtest run --dir PATH --commits N [--compact-every N] [--segment-bytes N] [--salvage]
///     trellis-crashtest repair --dir PATH
///
/// `run` opens (or creates) the store, prints `opened K` for the sequence number it recovered, then commits the
/// deterministic transactions K+1…N in per-commit durability, printing `ack N` after each commit returns (written
/// straight to the descriptor, so a line printed is a line the parent can read even after SIGKILL), `compacted N`
/// after each compaction, and `closed N` at the end. `repair` opens with salvage (which rewrites a damaged store) and
/// prints `repaired K`. Errors print `error: …` and exit 1; a usage error exits 64.
struct CrashTestCommand {
    enum Action: String {
        case run
        case repair
    }

    var action: Action
    var directory: URL
    var commits = 100
    var compactEvery = 0
    var segmentBytes = 64 << 20
    var salvage = false

    static let usage =
        "usage: trellis-crashtest run --dir PATH --commits N [--compact-every N] [--segment-bytes N] [--salvage]\n"
        + "       trellis-crashtest repair --dir PATH"

    init(arguments: [String]) throws(UsageError) {
        guard let first = arguments.first, let action = Action(rawValue: first) else { throw UsageError() }
        self.action = action
        var directory: URL?
        var rest = arguments.dropFirst()
        func number(_ name: String) throws(UsageError) -> Int {
            guard let text = rest.popFirst(), let n = Int(text), n >= 0 else { throw UsageError(name + " needs N") }
            return n
        }
        while let flag = rest.popFirst() {
            switch flag {
            case "--dir":
                guard let path = rest.popFirst() else { throw UsageError("--dir needs a path") }
                directory = URL(fileURLWithPath: path)
            case "--commits": commits = try number(flag)
            case "--compact-every": compactEvery = try number(flag)
            case "--segment-bytes": segmentBytes = try number(flag)
            case "--salvage": salvage = true
            default: throw UsageError("unknown option \(flag)")
            }
        }
        guard let directory else { throw UsageError("--dir is required") }
        self.directory = directory
    }

    func execute() throws {
        switch action {
        case .run: try run()
        case .repair: try repair()
        }
    }

    private func run() throws {
        var options = StoreOptions(
            durability: .perCommit, recovery: salvage ? .salvage : .tolerateTornTail, compaction: .manual,
            segmentBytes: segmentBytes)
        options.compressionLevel = 1
        let store = try Store(directory: directory, schema: CrashWorkload.schema, options: options)
        let start = Int(store.snapshot.sequence)
        say("opened \(start)")
        for n in stride(from: start + 1, through: commits, by: 1) {
            let commit = try CrashWorkload.commit(n, to: store)
            say("ack \(commit.sequence)")
            if compactEvery > 0 && n % compactEvery == 0 {
                try store.compact()
                say("compacted \(n)")
            }
        }
        try store.close()
        say("closed \(store.snapshot.sequence)")
    }

    private func repair() throws {
        let store = try Store(
            directory: directory, schema: CrashWorkload.schema, options: StoreOptions(recovery: .salvage))
        try store.close()
        say("repaired \(store.snapshot.sequence)")
    }
}

struct UsageError: Error {
    var message: String
    init(_ message: String = "") { self.message = message }
}

/// Writes a line straight to standard output (no buffer that a SIGKILL could lose).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

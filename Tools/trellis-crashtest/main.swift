import Foundation
import Trellis

// The K harness of the crash matrix: a child process that commits deterministic transactions and reports each
// acknowledged one, for tests to kill with SIGKILL or to let kill itself at a named point (`TRELLIS_CRASH_AT`).
do {
    let command = try CrashTestCommand(arguments: Array(CommandLine.arguments.dropFirst()))
    if command.crashPoints { CrashAtPoint.installFromEnvironment() }
    try command.execute()
} catch let error as UsageError {
    FileHandle.standardError.write(
        Data(((error.message.isEmpty ? "" : error.message + "\n") + CrashTestCommand.usage + "\n").utf8))
    exit(64)
} catch {
    say("error: \(error)")
    exit(1)
}

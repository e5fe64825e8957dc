import Foundation
import Trellis

/// `trellis`: inspect, verify and operate Trellis stores. Exit codes: 0 fine; 1 damage or a failed check; 2 usage
/// error; 3 cannot open (missing, permissions, locked).
enum ExitCode: Int32 {
    case ok = 0
    case failed = 1
    case usage = 2
    case cannotOpen = 3
}

struct UsageError: Error, CustomStringConvertible {
    let description: String
}

let commands: [(name: String, summary: String, run: ([String]) throws -> ExitCode)] = [
    ("demo", "build an outline store and show a reader that never waits for big saves", DemoCommand.run)
]

@MainActor func usage() -> String {
    var text = "usage: trellis <command> [options]\n\ncommands:\n"
    for c in commands { text += "  \(c.name.padding(toLength: 10, withPad: " ", startingAt: 0))\(c.summary)\n" }
    text += "\nRun 'trellis <command> --help' for a command's options.\n"
    return text
}

var arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first, name != "--help", name != "-h", name != "help" else {
    print(usage(), terminator: "")
    exit(arguments.isEmpty ? ExitCode.usage.rawValue : ExitCode.ok.rawValue)
}
guard let command = commands.first(where: { $0.name == name }) else {
    FileHandle.standardError.write(Data("trellis: unknown command '\(name)'\n\n\(usage())".utf8))
    exit(ExitCode.usage.rawValue)
}
do {
    exit(try command.run(Array(arguments.dropFirst())).rawValue)
} catch let error as UsageError {
    FileHandle.standardError.write(Data("trellis \(name): \(error)\n".utf8))
    exit(ExitCode.usage.rawValue)
} catch {
    FileHandle.standardError.write(Data("trellis \(name): \(error)\n".utf8))
    exit(ExitCode.failed.rawValue)
}

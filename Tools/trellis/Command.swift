/// One subcommand: its name and help, how it reads its arguments, and what it does.
///
/// Parsing is separate from running so that every usage error (exit 2) is found before any file is touched.
protocol Command {
    static var name: String { get }
    /// One line for `trellis --help`.
    static var summary: String { get }
    /// The full `trellis NAME --help` text: usage line, what it does, options, exit codes that differ.
    static var help: String { get }

    init(parsing arguments: inout Arguments) throws
    func run(_ console: Console) throws -> ExitCode
}

/// The root command: finds the subcommand, answers `--help`, and turns errors into exit codes and messages.
enum RootCommand {
    static var commands: [any Command.Type] {
        [
            InfoCommand.self, VerifyCommand.self, DumpCommand.self, HistoryCommand.self, FindCommand.self,
            ExportCommand.self, SchemaDiffCommand.self, MigrateCommand.self, CompactCommand.self, RepairCommand.self,
            StatsCommand.self, ReplicaCommand.self, PublishCommand.self, DemoCommand.self,
        ]
    }

    static var usage: String {
        var text = "usage: trellis <command> [options]\n\ncommands:\n"
        for c in commands {
            text += "  " + c.name.padding(toLength: 13, withPad: " ", startingAt: 0) + c.summary + "\n"
        }
        text += """

            Run 'trellis <command> --help' for a command's options.
            Exit codes: 0 fine; 1 damage, a failed check, or (schema-diff) a difference; 2 usage error (schema-diff:
            any error); 3 cannot open (missing, permissions, locked).

            """
        return text
    }

    /// Runs the command line `words` (without the program name) and returns the exit code.
    static func main(_ words: [String], console: Console) -> ExitCode {
        guard let name = words.first, !["--help", "-h", "help"].contains(name) else {
            if words.isEmpty {
                console.message(usage)
                return .usage
            }
            if words.count > 1, let command = commands.first(where: { $0.name == words[1] }) {
                console.line(command.help)
                return .ok
            }
            console.line(usage)
            return .ok
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            console.message("trellis: unknown command '\(name)'\n\n\(usage)")
            return .usage
        }
        var arguments = Arguments(words.dropFirst())
        if arguments.flag("--help", "-h") {
            console.line(command.help)
            return .ok
        }
        do {
            let parsed = try command.init(parsing: &arguments)
            try arguments.finish()
            return try parsed.run(console)
        } catch {
            let (code, message) = ExitCode.classify(error)
            let hint = code == .usage ? "\n" + firstLine(command.help) + "\nRun 'trellis \(name) --help' for more." : ""
            console.message("trellis \(name): \(message)\(hint)")
            return code
        }
    }

    private static func firstLine(_ text: String) -> String { String(text.prefix { $0 != "\n" }) }
}

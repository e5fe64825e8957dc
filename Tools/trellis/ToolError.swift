import Foundation
import Trellis

/// The process exit status. These numbers are part of the tool's interface (README.md); scripts branch on them.
enum ExitCode: Int32 {
    /// The command did what it was asked and found nothing wrong.
    case ok = 0
    /// The store is damaged, a check failed, or the command could not finish what it was asked.
    case failed = 1
    /// The command line is wrong; nothing was read or changed.
    case usage = 2
    /// The store cannot be opened: the path is missing, is not a store, is not readable, or a writer holds it.
    case cannotOpen = 3
}

/// A wrong command line: unknown option, missing value, bad number. Exit 2, with the command's usage line.
struct UsageError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}

/// The store could not be opened at all (exit 3), as opposed to opened and found damaged (exit 1).
struct CannotOpen: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}

/// A command that ran and could not do its job (exit 1); the message says what to do next.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}

extension ExitCode {
    /// The exit code and the one-line message for an error that ended a command.
    ///
    /// A writer's lock and file-system refusals met while opening are "cannot open" (3): the store may be fine, the
    /// caller must wait or fix permissions. Damage (`corrupt`, a `JournalProblem`) is 1: the store needs attention.
    static func classify(_ error: any Error) -> (ExitCode, String) {
        switch error {
        case let error as UsageError: return (.usage, error.description)
        case let error as CannotOpen: return (.cannotOpen, error.description)
        case let error as CommandFailure: return (.failed, error.description)
        case let error as JournalProblem: return (.failed, "damage: \(error)")
        case let error as TrellisError where error.code == .locked: return (.cannotOpen, error.message)
        case let error as TrellisError where error.code == .io: return (.cannotOpen, error.message)
        case let error as TrellisError: return (.failed, error.description)
        default: return (.failed, "\(error)")
        }
    }
}

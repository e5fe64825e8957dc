import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a command's words go: results on stdout (what scripts read), messages, prompts and progress on stderr.
///
/// Progress appears only when stderr is a terminal, so a redirected or piped run logs nothing but what it was
/// asked for, and tests compare output exactly.
struct Console: Sendable {
    /// Whether stderr is a terminal (decided once; a progress line is redrawn in place there).
    let showsProgress: Bool

    init(showsProgress: Bool = isatty(2) == 1) {
        self.showsProgress = showsProgress
    }

    /// Writes a line (or several) of results to stdout.
    func line(_ text: String = "") {
        print(text)
    }

    /// Writes results to stdout without adding a newline (streamed JSON).
    func write(_ text: String) {
        print(text, terminator: "")
    }

    /// Writes a message for people to stderr.
    func message(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Asks a yes/no question on stderr and reads the answer from stdin. Anything but "y" or "yes" is a no, and so
    /// is the end of input: a run without a person (or a `--yes`) must never take a destructive step.
    func confirm(_ question: String) -> Bool {
        FileHandle.standardError.write(Data("\(question) [y/N] ".utf8))
        guard let answer = readLine(strippingNewline: true) else {
            message("")
            return false
        }
        return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }

    /// A progress line for long work; silent when stderr is not a terminal.
    func progress(_ label: String) -> Progress { Progress(label: label, enabled: showsProgress) }
}

/// A counter redrawn on stderr at most ten times a second (more would cost more than the work it reports).
final class Progress {
    private let label: String
    private let enabled: Bool
    private var lastDraw: UInt64 = 0
    private var drawn = false

    init(label: String, enabled: Bool) {
        self.label = label
        self.enabled = enabled
    }

    func update(_ done: Int, of total: Int? = nil) {
        guard enabled else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        guard now - lastDraw >= 100_000_000 else { return }
        lastDraw = now
        drawn = true
        let amount = total.map { "\(done)/\($0)" } ?? "\(done)"
        FileHandle.standardError.write(Data("\r\(label): \(amount)\u{1B}[K".utf8))
    }

    /// Clears the line, so the results that follow start on a clean one.
    func finish() {
        guard enabled, drawn else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}

import Foundation

/// What the documentation's examples take for granted: a directory for a store, and somewhere their `print`s go.
///
/// The examples run inside test functions verbatim (`.ci/check-doc-examples.py` checks every block of README.md and
/// the DocC catalog is in a test). A test declares a local `func print(_:)` that appends to a `Printed`, so that it
/// can check what an example says it prints.
enum DocsScratch {
    /// A fresh path under the temporary directory; nothing is created there.
    static func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("trellis-docs-\(UUID().uuidString)")
    }

    /// Removes a directory made for an example.
    static func remove(_ url: URL) {
        try? FileManager.default.removeItem(at: url)
    }
}

/// The lines an example printed, each as `print` would have written it (items joined by spaces).
final class Printed {
    private(set) var lines: [String] = []

    func append(_ items: [Any]) {
        lines.append(items.map { "\($0)" }.joined(separator: " "))
    }
}

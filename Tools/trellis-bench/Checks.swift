/// The bench's own verdict on correctness: both engines must return the same counts and sums, so a fast wrong answer
/// fails the run (exit status 1) instead of winning it.
struct Checks {
    private(set) var failures: [String] = []
    private(set) var passed = 0

    mutating func same<T: Equatable>(_ step: String, _ what: String, trellis: T, sqlite: T) {
        if trellis == sqlite {
            passed += 1
        } else {
            failures.append("\(step) \(what): Trellis \(trellis), SQLite \(sqlite)")
        }
    }

    /// One engine's answer against the value computed from the generated data.
    mutating func equal<T: Equatable>(_ step: String, _ what: String, _ actual: T, expected: T) {
        if actual == expected {
            passed += 1
        } else {
            failures.append("\(step) \(what): \(actual), expected \(expected)")
        }
    }

    /// Sums of doubles may differ in the last bits when the engines round dates differently.
    mutating func close(_ step: String, _ what: String, trellis: Double, sqlite: Double, tolerance: Double = 1e-9) {
        let scale = max(abs(trellis), abs(sqlite), 1)
        if abs(trellis - sqlite) <= tolerance * scale {
            passed += 1
        } else {
            failures.append("\(step) \(what): Trellis \(trellis), SQLite \(sqlite)")
        }
    }

    /// A double sum against the value computed from the generated data.
    mutating func near(_ step: String, _ what: String, _ actual: Double, expected: Double, tolerance: Double = 1e-9) {
        if abs(actual - expected) <= tolerance * max(abs(actual), abs(expected), 1) {
            passed += 1
        } else {
            failures.append("\(step) \(what): \(actual), expected \(expected)")
        }
    }

    mutating func expect(_ step: String, _ condition: Bool, _ message: @autoclosure () -> String) {
        if condition {
            passed += 1
        } else {
            failures.append("\(step): \(message())")
        }
    }

    mutating func fetches(_ step: String, trellis t: FetchSummary, sqlite s: FetchSummary, expectedCount: Int) {
        same(step, "row count", trellis: t.count, sqlite: s.count)
        expect(step, t.count == expectedCount, "expected \(expectedCount) items, Trellis saw \(t.count)")
        same(step, "sum of id", trellis: t.idSum, sqlite: s.idSum)
        same(step, "title bytes", trellis: t.titleBytes, sqlite: s.titleBytes)
        close(step, "sum of score", trellis: t.scoreSum, sqlite: s.scoreSum)
        same(step, "flag count", trellis: t.flagged, sqlite: s.flagged)
        close(step, "sum of created", trellis: t.createdSum, sqlite: s.createdSum)
        same(step, "sum of n1", trellis: t.n1Sum, sqlite: s.n1Sum)
        same(step, "sum of n2…n5", trellis: t.otherSum, sqlite: s.otherSum)
    }

    mutating func merge(_ other: Checks) {
        failures += other.failures
        passed += other.passed
    }
}

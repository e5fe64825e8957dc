import Foundation

/// The steps that also run LMDB (issue 21): three engines in one step, in an order that changes from step to step.
extension BenchRun {
    /// Runs `body` for the three engines. Trellis and SQLite keep alternating as in `both`; LMDB's place among them
    /// moves on every other turn, so over six steps every order comes once.
    func all<T>(
        _ t: any BenchEngine, _ s: any BenchEngine, _ l: any BenchEngine, _ body: (any BenchEngine) throws -> T
    ) throws -> (
        trellis: T, sqlite: T, lmdb: T
    ) {
        var order: [any BenchEngine] = nextTrellisFirst() ? [t, s] : [s, t]
        order.insert(l, at: lmdbPlace)
        var results: [ObjectIdentifier: T] = [:]
        for engine in order { results[ObjectIdentifier(engine)] = try body(engine) }
        return (results[ObjectIdentifier(t)]!, results[ObjectIdentifier(s)]!, results[ObjectIdentifier(l)]!)
    }

    /// Where LMDB goes among the other two this turn (0, 1 or 2), read after `nextTrellisFirst()`.
    var lmdbPlace: Int { (turn / 2) % 3 }

    /// Runs `body` for the three engines and times it, in milliseconds, each after a `sync()` as in `timeBoth`.
    func timeAll(
        _ t: any BenchEngine, _ s: any BenchEngine, _ l: any BenchEngine, _ body: (any BenchEngine) throws -> Void
    ) throws -> (
        trellis: Double, sqlite: Double, lmdb: Double
    ) {
        try all(t, s, l) { engine in
            sync()
            return try Measure.milliseconds { try body(engine) }.1
        }
    }

    /// Runs `body` for the three engines, timed as `timeAll`, and returns what each returned with its time.
    func timedAll<T>(
        _ t: any BenchEngine, _ s: any BenchEngine, _ l: any BenchEngine, _ body: (any BenchEngine) throws -> T
    ) throws -> (
        trellis: (T, Double), sqlite: (T, Double), lmdb: (T, Double)
    ) {
        try all(t, s, l) { engine in
            sync()
            return try Measure.milliseconds { try body(engine) }
        }
    }
}

/// LMDB's answers against SQLite's: a mismatch fails the run as any other check.
extension Checks {
    mutating func lmdb<T: Equatable>(_ step: String, _ what: String, _ lmdb: T, sqlite: T) {
        equal(step, "LMDB \(what) (against SQLite's)", lmdb, expected: sqlite)
    }

    mutating func lmdbClose(_ step: String, _ what: String, _ lmdb: Double, sqlite: Double) {
        near(step, "LMDB \(what) (against SQLite's)", lmdb, expected: sqlite)
    }

    mutating func lmdbFetch(_ step: String, _ l: FetchSummary, sqlite s: FetchSummary) {
        lmdb(step, "row count", l.count, sqlite: s.count)
        lmdb(step, "sum of id", l.idSum, sqlite: s.idSum)
        lmdb(step, "title bytes", l.titleBytes, sqlite: s.titleBytes)
        lmdbClose(step, "sum of score", l.scoreSum, sqlite: s.scoreSum)
        lmdb(step, "flag count", l.flagged, sqlite: s.flagged)
        lmdbClose(step, "sum of created", l.createdSum, sqlite: s.createdSum)
        lmdb(step, "sum of n1", l.n1Sum, sqlite: s.n1Sum)
        lmdb(step, "sum of n2…n5", l.otherSum, sqlite: s.otherSum)
    }
}

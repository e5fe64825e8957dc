import TrellisCore

/// The tests draw from TrellisCore's `SeededRandom` (splitmix64): a seed replays exactly the same operations on every
/// run and platform, so a failure report's seed and step number reproduce it.
extension SeededRandom {
    /// A number in `0..<bound`; the slight modulo bias does not matter to these tests.
    mutating func below(_ bound: Int) -> Int {
        Int(truncatingIfNeeded: next() % UInt64(bound))
    }

    /// `true` with probability `percent` / 100.
    mutating func chance(_ percent: Int) -> Bool {
        below(100) < percent
    }
}

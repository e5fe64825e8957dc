/// The seeded generator of the model tests (splitmix64): a seed replays exactly the same operations on every run and
/// platform, so a failure report's seed and step number reproduce it.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// A number in `0..<bound`; the slight modulo bias does not matter to these tests.
    mutating func below(_ bound: Int) -> Int {
        Int(truncatingIfNeeded: next() % UInt64(bound))
    }

    /// `true` with probability `percent` / 100.
    mutating func chance(_ percent: Int) -> Bool {
        below(100) < percent
    }
}

/// Whether a test mutates a collection that nothing else holds, or one whose previous version a hidden copy keeps.
/// Shared runs prove path copying leaves the copy alone; unique runs exercise the in-place paths.
enum Sharing: CaseIterable, Sendable, CustomStringConvertible {
    case unique
    case shared

    var description: String { self == .unique ? "unique" : "shared" }
}

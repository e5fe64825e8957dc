/// The project's one seeded random number generator (Steele, Lea and Flood's SplitMix64): small and fast, and a seed
/// replays exactly the same numbers on every run and platform. Crash simulations, the benchmark's workload and the
/// tests' workloads all draw from it.
@usableFromInline package struct SeededRandom: RandomNumberGenerator, Sendable {
    @usableFromInline var state: UInt64

    package init(seed: UInt64) { state = seed }

    @inlinable package mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

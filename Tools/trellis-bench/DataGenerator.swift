import Trellis

/// The workload's one source of randomness is TrellisCore's `SeededRandom` (splitmix64), so every engine and every
/// run sees the same bytes.
extension SeededRandom {
    /// Uniform in [0, 1), from the top 53 bits.
    mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }
}

/// One `Item` as plain values, engine-neutral: both engines are fed from these.
struct ItemData: Sendable {
    var id: Int64
    var title: String
    var score: Double
    var flag: Bool
    /// Unix seconds.
    var created: Double
    var n1: Int64
    var n2: Int64
    var n3: Int64
    var n4: Int64
    var n5: Int64
}

/// The workload's item stream: item idx has `id = idx + 1` and draws its fields from one splitmix64 stream seeded
/// with 42, in the order the workload lists them.
struct ItemGenerator: Sequence, IteratorProtocol {
    static let seed: UInt64 = 42
    private var random = SeededRandom(seed: ItemGenerator.seed)
    private var index: Int64 = 0
    private var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(40) }

    mutating func next() -> ItemData? {
        let len = 20 + Int(random.next() % 21)
        bytes.removeAll(keepingCapacity: true)
        for position in 0..<len {
            if position == 0 || position == len - 1 {
                bytes.append(UInt8(ascii: "a") + UInt8(random.next() % 26))
            } else {
                let c = random.next() % 27
                bytes.append(c == 26 ? UInt8(ascii: " ") : UInt8(ascii: "a") + UInt8(c))
            }
        }
        let title = String(decoding: bytes, as: UTF8.self)
        let score = random.unit() * 1000
        let flag = random.next() >> 63 == 1
        let created = 1_577_836_800 + Double(random.next() % 157_680_000_000) / 1000
        let n1 = Int64(random.next() % 1_000_000_000)
        let n2 = Int64(random.next() % 1_000_000_000)
        let n3 = Int64(random.next() % 1_000_000_000)
        let n4 = Int64(random.next() % 1_000_000_000)
        let n5 = Int64(random.next() % 1_000_000_000)
        index += 1
        return ItemData(
            id: index, title: title, score: score, flag: flag, created: created, n1: n1, n2: n2, n3: n3, n4: n4, n5: n5)
    }

    /// Items idx = 0 ..< count.
    static func items(_ count: Int) -> [ItemData] {
        var out: [ItemData] = []
        out.reserveCapacity(count)
        var generator = ItemGenerator()
        for _ in 0..<count { out.append(generator.next()!) }
        return out
    }
}

/// The random choices inside steps, each from its own splitmix64 stream so that adding a step changes no other.
enum StepRandom {
    /// W3a: ids to look up, uniform over 1...n.
    static func lookupIDs(count: Int, itemCount n: Int) -> [Int64] {
        var random = SeededRandom(seed: 0x3A)
        return (0..<count).map { _ in Int64(random.next() % UInt64(n)) + 1 }
    }

    /// W3b: score ranges [lo, lo + 10), each about 1% of the score domain [0, 1000).
    static func scoreRanges(count: Int) -> [ScoreRange] {
        var random = SeededRandom(seed: 0x3B)
        return (0..<count).map { _ in
            let lo = (random.unit() * 990 * 1000).rounded() / 1000
            return ScoreRange(lower: lo, upper: lo + 10)
        }
    }

    /// W7: the ids the reader looks up while the writer runs, uniform over 1...n.
    static func readerIDs(count: Int, itemCount n: Int) -> [Int64] {
        var random = SeededRandom(seed: 0x07)
        return (0..<count).map { _ in Int64(random.next() % UInt64(n)) + 1 }
    }
}

/// A half-open score range, `lower <= score < upper`.
struct ScoreRange: Sendable {
    var lower: Double
    var upper: Double
}

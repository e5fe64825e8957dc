import Foundation

/// Text histograms for `stats`: one row per bucket, a bar scaled to the largest count.
///
///     ≤ 128 B   ████████████████████████████████████████ 812
///     ≤ 256 B   ███████                                  140
enum Histogram {
    static func rows(_ buckets: [(label: String, count: Int)], width: Int = 40) -> [String] {
        let widest = buckets.map(\.label.count).max() ?? 0
        let largest = max(1, buckets.map(\.count).max() ?? 1)
        return buckets.map { bucket in
            // A non-empty bucket always gets at least one block, so a rare size is seen, not rounded away.
            let length = bucket.count == 0 ? 0 : max(1, bucket.count * width / largest)
            let bar = String(repeating: "█", count: length) + String(repeating: " ", count: width - length)
            return "  " + bucket.label.padding(toLength: widest, withPad: " ", startingAt: 0) + "  " + bar
                + " \(bucket.count)"
        }
    }

    /// Counts of `sizes` in power-of-two buckets, from the smallest bucket used to the largest.
    static func powerOfTwoBuckets(_ sizes: [Int]) -> [(upTo: Int, count: Int)] {
        guard let smallest = sizes.min(), let largest = sizes.max() else { return [] }
        func bucket(_ n: Int) -> Int { n <= 1 ? 0 : Int.bitWidth - (n - 1).leadingZeroBitCount }
        let (low, high) = (bucket(smallest), bucket(largest))
        var counts = Array(repeating: 0, count: high - low + 1)
        for size in sizes { counts[bucket(size) - low] += 1 }
        return counts.enumerated().map { (1 << ($0 + low), $1) }
    }

    /// Counts of `times` in `bins` equal spans from the first to the last.
    static func timeBins(_ times: [Date], bins: Int = 10) -> [(start: Date, end: Date, count: Int)] {
        guard let first = times.min(), let last = times.max() else { return [] }
        let span = last.timeIntervalSince(first)
        let n = span > 0 ? bins : 1
        var counts = Array(repeating: 0, count: n)
        for t in times {
            let i = span > 0 ? Int(t.timeIntervalSince(first) / span * Double(n)) : 0
            counts[min(n - 1, i)] += 1
        }
        let step = span / Double(n)
        return counts.enumerated().map {
            (first.addingTimeInterval(step * Double($0)), first.addingTimeInterval(step * Double($0 + 1)), $1)
        }
    }
}

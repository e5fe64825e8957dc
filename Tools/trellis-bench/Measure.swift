import Foundation

/// Monotonic time and the small statistics the steps need.
enum Measure {
    /// Nanoseconds on the monotonic clock.
    @inline(__always)
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// Runs `body` and returns its result with the elapsed milliseconds.
    static func milliseconds<T>(_ body: () throws -> T) rethrows -> (T, Double) {
        let start = now()
        let result = try body()
        return (result, Double(now() - start) / 1e6)
    }

    /// The value at quantile `q` (0...1) of `values`, by the nearest-rank method; nil when empty.
    static func quantile(_ values: [Double], _ q: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = Int((q * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }
}

/// Bytes on disk under a directory: the sum of its regular files' sizes.
enum DiskUsage {
    static func bytes(under path: String) -> Int {
        guard let walker = FileManager.default.enumerator(atPath: path) else { return 0 }
        var total = 0
        while let name = walker.nextObject() as? String {
            let full = (path as NSString).appendingPathComponent(name)
            var info = stat()
            if lstat(full, &info) == 0, info.st_mode & S_IFMT == S_IFREG { total += Int(info.st_size) }
        }
        return total
    }
}

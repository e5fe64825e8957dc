import Foundation

/// The floors of issue 21: what W2 and S1 would cost with no engine at all, measured in the same run, so that each
/// Trellis figure can be read against the limit it approaches rather than only against SQLite.
enum Floors {
    /// W2's floor: the items as plain Swift arrays, one per attribute, titles packed as UTF-8 bytes with end offsets
    /// (as Trellis's leaves hold them); reading every item builds the same `String` and reads the same scalars.
    struct Columns {
        var ids: [Int64] = []
        var titleBytes: [UInt8] = []
        var titleEnds: [Int] = []
        var scores: [Double] = []
        var flags: [Bool] = []
        /// Seconds since 2001, as a `Date` stores them.
        var created: [Double] = []
        var n1: [Int64] = []
        var n2: [Int64] = []
        var n3: [Int64] = []
        var n4: [Int64] = []
        var n5: [Int64] = []

        init(_ items: ArraySlice<ItemData>) {
            for item in items {
                ids.append(item.id)
                titleBytes.append(contentsOf: item.title.utf8)
                titleEnds.append(titleBytes.count)
                scores.append(item.score)
                flags.append(item.flag)
                created.append(Date(timeIntervalSince1970: item.created).timeIntervalSinceReferenceDate)
                n1.append(item.n1)
                n2.append(item.n2)
                n3.append(item.n3)
                n4.append(item.n4)
                n5.append(item.n5)
            }
        }

        /// The sums `BenchEngine.fetchAll` returns, read from the arrays.
        func fetchAll() -> FetchSummary {
            var sum = FetchSummary()
            titleBytes.withUnsafeBufferPointer { bytes in
                var start = 0
                for i in 0..<ids.count {
                    let end = titleEnds[i]
                    let title = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
                    start = end
                    let created = Date(timeIntervalSinceReferenceDate: self.created[i])
                    sum.count += 1
                    sum.idSum &+= ids[i]
                    sum.titleBytes += title.utf8.count
                    sum.scoreSum += scores[i]
                    sum.flagged += flags[i] ? 1 : 0
                    sum.createdSum += created.timeIntervalSince1970
                    sum.n1Sum &+= n1[i]
                    sum.otherSum &+= n2[i] &+ n3[i] &+ n4[i] &+ n5[i]
                }
            }
            return sum
        }
    }

    /// S1's floor: appending `bytes` bytes to a preallocated file in `directory` (the disk the store is on) and one
    /// `fdatasync`, as a durable commit of that size must at least do. The median of `repeats` appends, each to a new
    /// offset, in milliseconds; nil when the file cannot be made.
    static func syncMilliseconds(bytes: Int, directory: String, repeats: Int = 21) -> Double? {
        let path = directory + "/floor-sync.bin"
        let fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0o644)
        guard fd >= 0 else { return nil }
        defer {
            close(fd)
            unlink(path)
        }
        let size = max(bytes, 1)
        guard posix_fallocate(fd, 0, off_t(size * (repeats + 1))) == 0, fsync(fd) == 0 else { return nil }
        let payload = [UInt8](repeating: 0xA5, count: size)
        var times: [Double] = []
        for k in 0..<repeats {
            let start = Measure.now()
            let written = payload.withUnsafeBytes { pwrite(fd, $0.baseAddress, size, off_t(k * size)) }
            guard written == size, fdatasync(fd) == 0 else { return nil }
            times.append(Double(Measure.now() - start) / 1e6)
        }
        return Measure.median(times)
    }
}

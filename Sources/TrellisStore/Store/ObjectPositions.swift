import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// Where each object a transaction inserts (or updates) sits in its `inserts` (or `updates`).
///
/// The allocator hands out serials in ascending order and rows are read in ascending order, so each entity's
/// serials usually arrive ascending, most often one after another at consecutive positions: they are kept as runs
/// (a bulk insert is one run), found by a binary search without hashing. An ID that arrives out of order goes to a
/// dictionary instead.
struct ObjectPositions: Sendable {
    /// Serials `serial ..< serial + count` sit at positions `position ..< position + count`.
    private struct Run: Sendable {
        var serial: UInt64
        var position: Int
        var count: Int
    }

    private var runs: [[Run]] = []
    private var others: [ObjectID: Int] = [:]

    mutating func add(_ id: ObjectID, at position: Int) {
        let e = Int(id.entity)
        while runs.count <= e { runs.append([]) }
        guard let last = runs[e].last else {
            return runs[e].append(Run(serial: id.serial, position: position, count: 1))
        }
        let end = last.serial + UInt64(last.count)
        if id.serial < end {
            others[id] = position
        } else if id.serial == end, position == last.position + last.count {
            runs[e][runs[e].count - 1].count += 1
        } else {
            runs[e].append(Run(serial: id.serial, position: position, count: 1))
        }
    }

    /// The position of the newest insert of `id`, or nil when the transaction does not insert it.
    func position(of id: ObjectID) -> Int? {
        if !others.isEmpty, let p = others[id] { return p }
        let e = Int(id.entity)
        guard e < runs.count else { return nil }
        return runs[e].withUnsafeBufferPointer { runs -> Int? in
            // The last run starting at or below the serial.
            var low = 0
            var high = runs.count
            while low < high {
                let middle = (low + high) / 2
                if runs[middle].serial <= id.serial { low = middle + 1 } else { high = middle }
            }
            guard low > 0 else { return nil }
            let run = runs[low - 1]
            let offset = id.serial - run.serial
            return offset < UInt64(run.count) ? run.position + Int(offset) : nil
        }
    }
}

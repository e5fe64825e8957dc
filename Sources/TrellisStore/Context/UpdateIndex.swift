import TrellisCore

/// Where each object's entry sits in `PendingChanges.updates`: an open-addressed table of entry positions (linear
/// probing, at most half full) whose keys are the entries' own IDs. A model setter finds or claims its object's entry
/// on every write; hashing an ID through `Hasher` cost more than the rest of the write.
struct UpdateIndex {
    /// Entry position + 1 per bucket; 0 for an empty bucket. Its count is zero or a power of two.
    private var buckets: [Int32] = []
    private var shift = 64
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    @inline(__always)
    private func home(_ id: ObjectID) -> Int {
        let mixed = (id.serial ^ (UInt64(id.entity) &<< 48)) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed &>> UInt64(shift))
    }

    /// The bucket holding `id`'s entry, or the empty bucket where it would go.
    @inline(__always)
    private func bucket(_ id: ObjectID, _ updates: [PendingUpdate]) -> (bucket: Int, found: Bool) {
        let mask = buckets.count - 1
        var b = home(id)
        while true {
            let entry = Int(buckets[b])
            if entry == 0 { return (b, false) }
            if updates[entry - 1].id == id { return (b, true) }
            b = (b + 1) & mask
        }
    }

    /// The position of `id`'s entry in `updates`.
    func find(_ id: ObjectID, in updates: [PendingUpdate]) -> Int? {
        guard count > 0 else { return nil }
        let (b, found) = bucket(id, updates)
        return found ? Int(buckets[b]) - 1 : nil
    }

    /// The position of `id`'s entry, or `next` claimed for it (the caller appends the entry there).
    mutating func findOrClaim(_ id: ObjectID, next: Int, in updates: [PendingUpdate]) -> Int {
        if (count + 1) * 2 > buckets.count { grow(updates) }
        let (b, found) = bucket(id, updates)
        if found { return Int(buckets[b]) - 1 }
        buckets[b] = Int32(next + 1)
        count += 1
        return next
    }

    /// Forgets `id`'s entry and returns its position; nil when it has none.
    mutating func remove(_ id: ObjectID, in updates: [PendingUpdate]) -> Int? {
        guard count > 0 else { return nil }
        let place = bucket(id, updates)
        guard place.found else { return nil }
        var hole = place.bucket
        let position = Int(buckets[hole]) - 1
        // Backward shift: later entries of the run move into the hole unless their home lies after it.
        let mask = buckets.count - 1
        var b = hole
        while true {
            b = (b + 1) & mask
            let entry = Int(buckets[b])
            if entry == 0 { break }
            let h = home(updates[entry - 1].id)
            let stays = hole <= b ? (hole < h && h <= b) : (hole < h || h <= b)
            if stays { continue }
            buckets[hole] = buckets[b]
            hole = b
        }
        buckets[hole] = 0
        count -= 1
        return position
    }

    /// Points `id`'s entry at a new position (before the entry moves there).
    mutating func repoint(_ id: ObjectID, to position: Int, in updates: [PendingUpdate]) {
        let (b, found) = bucket(id, updates)
        precondition(found, "Trellis: no update entry for \(id)")
        buckets[b] = Int32(position + 1)
    }

    mutating func removeAll() {
        buckets = []
        shift = 64
        count = 0
    }

    /// Doubles the table (at least 16 buckets) and places every entry again.
    private mutating func grow(_ updates: [PendingUpdate]) {
        let capacity = max(16, buckets.count * 2)
        buckets = Array(repeating: 0, count: capacity)
        shift = 64 - capacity.trailingZeroBitCount
        let mask = capacity - 1
        for position in 0..<count {
            var b = home(updates[position].id)
            while buckets[b] != 0 { b = (b + 1) & mask }
            buckets[b] = Int32(position + 1)
        }
    }
}

import TrellisCore

/// A set of object IDs for the bookkeeping of one commit (the objects a delete dooms): per entity, blocks of 64
/// consecutive serials, each a bitmask, in an open-addressing table keyed by `serial >> 6`.
///
/// Serials of related objects are mostly close together, so a cascade of 100,000 objects fills a couple of thousand
/// blocks; a lookup is a multiply, a probe or two and a bit test, where `Set<ObjectID>` hashes with SipHash.
package struct ObjectIDSet: Sendable {
    private var entities: [BlockTable] = []

    package init() {}

    init(_ ids: some Sequence<ObjectID>) {
        for id in ids { insert(id) }
    }

    /// Adds `id`; returns whether it was new.
    @discardableResult
    package mutating func insert(_ id: ObjectID) -> Bool {
        let e = Int(id.entity)
        while entities.count <= e { entities.append(BlockTable()) }
        return entities[e].insert(id.serial)
    }

    package func contains(_ id: ObjectID) -> Bool {
        let e = Int(id.entity)
        return e < entities.count && entities[e].contains(id.serial)
    }
}

/// The blocks of one entity. Keys are stored plus one, so zero marks an empty slot.
private struct BlockTable: Sendable {
    private var keys: [UInt64] = []
    private var masks: [UInt64] = []
    private var used = 0
    private var shift: UInt64 = 64

    @inline(__always)
    private func slot(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    func contains(_ serial: UInt64) -> Bool {
        guard used > 0 else { return false }
        let key = serial >> Leaf.shift &+ 1
        var i = slot(key)
        while keys[i] != 0 {
            if keys[i] == key { return masks[i] & (1 << (serial & Leaf.mask)) != 0 }
            i = (i + 1) & (keys.count - 1)
        }
        return false
    }

    mutating func insert(_ serial: UInt64) -> Bool {
        if (used + 1) * 2 > keys.count { grow() }
        let key = serial >> Leaf.shift &+ 1
        let bit: UInt64 = 1 << (serial & Leaf.mask)
        var i = slot(key)
        while keys[i] != 0 {
            if keys[i] == key {
                if masks[i] & bit != 0 { return false }
                masks[i] |= bit
                return true
            }
            i = (i + 1) & (keys.count - 1)
        }
        keys[i] = key
        masks[i] = bit
        used += 1
        return true
    }

    private mutating func grow() {
        let capacity = max(16, keys.count * 2)
        let oldKeys = keys
        let oldMasks = masks
        keys = Array(repeating: 0, count: capacity)
        masks = Array(repeating: 0, count: capacity)
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        for j in oldKeys.indices where oldKeys[j] != 0 {
            var i = slot(oldKeys[j])
            while keys[i] != 0 { i = (i + 1) & (capacity - 1) }
            keys[i] = oldKeys[j]
            masks[i] = oldMasks[j]
        }
    }
}

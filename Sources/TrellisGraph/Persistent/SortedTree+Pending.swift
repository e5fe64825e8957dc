import TrellisCore

/// The entries a `SortedTree` took since it last folded: strictly ascending keys with their values, none of them in
/// the tree's nodes.
///
/// A small write under a snapshot copies this run (a few hundred bytes, no nodes) instead of a root-to-leaf path of
/// nodes, each of whose copies retains every child; the run goes into the nodes in one batch once it reaches its
/// limit, and the paths that batch shares are copied once for all of it. It is part of the tree's value, so a
/// snapshot holds it as it was and readers see entries either in the run or in the nodes, never in neither.
struct SortedTreePending<Key: Comparable, Value> {
    var keys: ContiguousArray<Key> = []
    var values: NodeValues<Value> = []

    /// - Complexity: O(1).
    var count: Int { keys.count }

    /// - Complexity: O(1).
    var isEmpty: Bool { keys.isEmpty }

    /// The first position whose key is not less than `key` (`count` if none).
    ///
    /// - Complexity: O(log p) for p entries.
    func position(notBelow key: Key) -> Int {
        keys.withUnsafeBufferPointer { keys in
            var (low, high) = (0, keys.count)
            while low < high {
                let middle = (low &+ high) / 2
                if keys[middle] < key { low = middle + 1 } else { high = middle }
            }
            return low
        }
    }

    /// The first position whose key is greater than `key` (`count` if none).
    ///
    /// - Complexity: O(log p).
    func position(above key: Key) -> Int {
        keys.withUnsafeBufferPointer { keys in
            var (low, high) = (0, keys.count)
            while low < high {
                let middle = (low &+ high) / 2
                if key < keys[middle] { high = middle } else { low = middle + 1 }
            }
            return low
        }
    }

    /// The position of `key`, or nil when the run does not hold it.
    ///
    /// - Complexity: O(log p).
    func position(of key: Key) -> Int? {
        guard !keys.isEmpty else { return nil }
        let position = position(notBelow: key)
        return position < keys.count && keys[position] == key ? position : nil
    }

    /// The number of entries below `key`, or not above it when `includingKey`.
    ///
    /// - Complexity: O(log p).
    func entryCount(below key: Key, includingKey: Bool) -> Int {
        includingKey ? position(above: key) : position(notBelow: key)
    }

    /// Whether both runs are the same storage (so the same entries); `false` does not prove they differ.
    ///
    /// - Complexity: O(1).
    func isIdentical(to other: SortedTreePending) -> Bool {
        guard keys.count == other.keys.count else { return false }
        guard !keys.isEmpty else { return true }
        return keys.withUnsafeBufferPointer { mine in
            other.keys.withUnsafeBufferPointer { theirs in mine.baseAddress == theirs.baseAddress }
        }
    }
}

extension SortedTreePending: Sendable where Key: Sendable, Value: Sendable {}

extension SortedTree {
    /// How many entries `insertBuffered` keeps out of the nodes before it folds them in: a commit copies the run
    /// (about half this many entries on average) where it would copy a path, and a fold copies the union of the
    /// run's paths once.
    package static var pendingLimit: Int { 32 }

    /// Stores `value` for `key` as `updateValue(_:forKey:)` does, but a key the nodes do not hold goes into the
    /// pending run first, and the run goes into the nodes when it reaches `limit` entries. Returns the value replaced.
    /// `absent`: the caller knows the tree does not hold `key` (an index entry of an object that has none), so the
    /// descent that would look for it in the nodes is skipped.
    ///
    /// - Complexity: O(log n) for the lookup (none when `absent`) and O(limit) to write the run; every `limit`-th new
    ///   key also folds the run, O(limit · log n).
    @discardableResult
    package mutating func insertBuffered(
        _ value: Value, forKey key: Key, limit: Int = Self.pendingLimit, absent: Bool = false
    ) -> Value? {
        assert(!absent || (pending.position(of: key) == nil && !nodesContain(key)), "a key said to be absent is held")
        if !absent, let position = pending.position(of: key) {
            let replaced = pending.values[position]
            pending.values[position] = value
            return replaced
        }
        // A key the nodes hold is replaced there: the run holds only keys the nodes do not.
        if !absent, nodesContain(key) { return updateValue(value, forKey: key) }
        let position = pending.position(notBelow: key)
        pending.keys.insert(key, at: position)
        pending.values.insert(value, at: position)
        if pending.count >= limit { foldPending() }
        return nil
    }

    /// Moves the pending run into the nodes, one path copy for the keys that share it.
    ///
    /// - Complexity: O(p log n) for p pending entries.
    package mutating func foldPending() {
        guard !pending.isEmpty else { return }
        let run = pending
        pending = SortedTreePending()
        for position in run.keys.indices { updateValue(run.values[position], forKey: run.keys[position]) }
    }

    /// The number of entries in the pending run (for tests).
    ///
    /// - Complexity: O(1).
    package var pendingCount: Int { pending.count }

    /// The entry at merged rank `rank` when the run is not empty: the run's entry whose merged rank it is, or the
    /// node entry with as many run entries before it as the run's entries below it.
    ///
    /// - Complexity: O(p · fanout · log n) for p pending entries.
    func mergedElement(atRank rank: Int) -> (key: Key, value: Value) {
        for position in pending.keys.indices {
            let merged = nodeEntryCount(below: pending.keys[position], includingKey: false) + position
            if merged == rank { return (pending.keys[position], pending.values[position]) }
            if merged > rank { return nodeElement(atRank: rank - position) }
        }
        return nodeElement(atRank: rank - pending.count)
    }
}

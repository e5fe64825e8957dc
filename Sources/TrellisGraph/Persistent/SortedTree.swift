import TrellisCore

/// A persistent ordered map: a B+-tree whose internal nodes count the entries under each child.
///
/// Leaves hold up to `fanout` sorted keys with their values and internal nodes up to `branching(fanout)` children
/// (`fanout`, at most 16); every node but the root is at least half full, and all leaves are at the same depth. The
/// counts make `rank(of:)`, `element(atRank:)` and range counts O(log n), and let a range scan know its length before
/// it starts.
///
/// It is a value: copying is O(1) and copies share nodes; a mutation copies only the nodes on the path to the key
/// (and, when rebalancing, one sibling) that other copies still see, and changes uniquely held nodes in place.
///
/// ```swift
/// var byDue = SortedTree<Double, Int>()
/// byDue[3.5] = 7
/// let soon = byDue.elements(from: 0, to: 10)          // lazily, in ascending key order
/// let late = byDue.count(from: 10, inclusive: true)   // O(log n)
/// ```
package struct SortedTree<Key: Comparable, Value> {
    typealias Node = SortedTreeNode<Key, Value>

    /// The fan-out of `init()`: against 32 and 128, the best balance of lookup time, the cost of a write under a
    /// snapshot and bytes an entry. Beyond 64, every write under a snapshot copies too much.
    static var defaultFanout: Int { 64 }

    /// The most children an internal node takes, whatever the fan-out. Writing under a snapshot copies every
    /// internal node on the path, and the copy retains each of its children, whose headers are rarely in cache; with
    /// 64 children a node, those retains and their releases dominate a one-object commit. With 16, a path retains
    /// far fewer children, for one more level of small nodes, which stay in cache.
    static var maxBranching: Int { 16 }

    /// The most children of an internal node in a tree of this fan-out.
    ///
    /// - Complexity: O(1).
    @inline(__always)
    static func branching(_ fanout: Int) -> Int { Swift.min(fanout, maxBranching) }

    /// The most entries (a leaf) or children (an internal node) `node` may hold; every node but the root holds at
    /// least half.
    ///
    /// - Complexity: O(1).
    @inline(__always)
    static func capacity(of node: Node, fanout: Int) -> Int { node.isLeaf ? fanout : branching(fanout) }

    /// The root, or `nil` when empty; a root leaf is never empty and a root internal node has two children or more.
    var root: Node?

    /// The number of entries in the nodes (the pending run's are not among them), kept outside the nodes so that
    /// `count` is O(1).
    var storedCount: Int

    /// Entries not yet in the nodes (see `insertBuffered`); empty unless that put some there.
    var pending = SortedTreePending<Key, Value>()

    /// The most entries in a leaf and the most children of an internal node; non-root nodes hold at least half.
    let fanout: Int

    /// An empty tree; allocates nothing.
    ///
    /// - Complexity: O(1).
    package init() {
        self.init(fanout: Self.defaultFanout)
    }

    /// An empty tree with a chosen fan-out; small ones let tests reach deep trees with few keys.
    ///
    /// - Complexity: O(1).
    package init(fanout: Int) {
        precondition(fanout >= 4, "SortedTree: fan-out \(fanout) is below 4")
        root = nil
        storedCount = 0
        self.fanout = fanout
    }

    /// The number of entries.
    ///
    /// - Complexity: O(1).
    package var count: Int { storedCount + pending.count }

    /// Whether the tree holds no entries.
    ///
    /// - Complexity: O(1).
    package var isEmpty: Bool { storedCount == 0 && pending.isEmpty }

    /// The value for `key`; setting `nil` removes the key.
    ///
    /// - Complexity: O(log n); a write also copies the shared nodes on the path, O(fanout) each.
    package subscript(key: Key) -> Value? {
        get { value(forKey: key) }
        set {
            if let newValue {
                updateValue(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// The value for `key`, or `nil`.
    ///
    /// - Complexity: O(log n).
    package func value(forKey key: Key) -> Value? {
        if let position = pending.position(of: key) { return pending.values[position] }
        guard let (leaf, position) = leafPosition(of: key) else { return nil }
        return leaf.values[position]
    }

    /// Whether `key` is present; unlike `value(forKey:) != nil` it also works when `Value` is itself optional.
    ///
    /// - Complexity: O(log n).
    package func contains(_ key: Key) -> Bool {
        pending.position(of: key) != nil || leafPosition(of: key) != nil
    }

    /// Whether the nodes hold `key` (the pending run aside).
    ///
    /// - Complexity: O(log n).
    func nodesContain(_ key: Key) -> Bool {
        leafPosition(of: key) != nil
    }

    /// The entry with the smallest key, or `nil` when empty.
    ///
    /// - Complexity: O(log n).
    package var first: (key: Key, value: Value)? {
        let inNodes: (key: Key, value: Value)? = root.map { root in
            var node = root
            while !node.isLeaf { node = node.children[0] }
            return (node.keys[0], node.values[0])
        }
        guard let key = pending.keys.first else { return inNodes }
        if let inNodes, inNodes.key < key { return inNodes }
        return (key, pending.values[0])
    }

    /// The entry with the largest key, or `nil` when empty.
    ///
    /// - Complexity: O(log n).
    package var last: (key: Key, value: Value)? {
        let inNodes: (key: Key, value: Value)? = root.map { root in
            var node = root
            while !node.isLeaf { node = node.children[node.children.count - 1] }
            return (node.keys[node.keys.count - 1], node.values[node.values.count - 1])
        }
        guard let key = pending.keys.last else { return inNodes }
        if let inNodes, key < inNodes.key { return inNodes }
        return (key, pending.values[pending.count - 1])
    }

    /// Whether both trees are the same version: they share their root, so they hold the same entries.
    /// `false` does not prove they differ.
    ///
    /// - Complexity: O(1).
    package func isIdentical(to other: SortedTree<Key, Value>) -> Bool {
        root === other.root && pending.isIdentical(to: other.pending)
    }

    /// The leaf that holds `key` and its position there, or `nil` if the key is absent.
    ///
    /// - Complexity: O(log n).
    private func leafPosition(of key: Key) -> (Node, Int)? {
        guard var node = root else { return nil }
        while !node.isLeaf { node = node.children[node.firstPosition(above: key)] }
        let position = node.firstPosition(notBelow: key)
        guard position < node.keys.count, node.keys[position] == key else { return nil }
        return (node, position)
    }
}

extension SortedTree: Sendable where Key: Sendable, Value: Sendable {}

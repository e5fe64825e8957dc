import TrellisCore

/// A persistent hash map: a hash-array-mapped trie with 32-way bitmap nodes and collision nodes.
///
/// Each level consumes five bits of the key's hash. A slot holds either one key–value pair inline or a subtree;
/// keys whose full 64-bit hashes are equal share a collision node. The shape is canonical: a given set of keys has one
/// shape whatever the order of the insertions and removals that produced it, because a subtree exists only where keys
/// of two or more distinct hashes share a hash prefix, and a collision node only where keys share the whole hash.
///
/// It is a value: copying is O(1) and copies share nodes; a mutation copies only the nodes on the path to the key
/// that other copies still see, and changes uniquely held nodes in place. Iteration order is unspecified.
///
/// ```swift
/// var byName = HashTrie<String, Int>()
/// byName["ada"] = 1
/// let before = byName         // O(1); `before` never changes
/// byName["ada"] = 2           // copies the root-to-key path only
/// ```
struct HashTrie<Key: Hashable, Value> {
    typealias Node = HashTrieNode<Key, Value>

    /// The root bitmap node, or `nil` when empty.
    var root: Node?

    /// Backing store for `count`, kept outside the nodes so that `count` is O(1).
    var storedCount: Int

    /// An empty trie; allocates nothing.
    ///
    /// - Complexity: O(1).
    init() {
        root = nil
        storedCount = 0
    }

    /// The number of keys.
    ///
    /// - Complexity: O(1).
    var count: Int { storedCount }

    /// Whether the trie holds no keys.
    ///
    /// - Complexity: O(1).
    var isEmpty: Bool { storedCount == 0 }

    /// The value for `key`; setting `nil` removes the key.
    ///
    /// - Complexity: O(log₃₂ n) expected node visits plus one hash of the key (O(c) for the keys of a collision node,
    ///   c of them); a write also copies the shared nodes on the path.
    subscript(key: Key) -> Value? {
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
    /// - Complexity: O(log₃₂ n) expected; O(c) more in a collision node of c keys.
    func value(forKey key: Key) -> Value? {
        guard let root else { return nil }
        return Self.find(key, hash: Node.hash(key), in: root)?.value
    }

    /// Whether `key` is present; unlike `value(forKey:) != nil` it also works when `Value` is itself optional.
    ///
    /// - Complexity: O(log₃₂ n) expected; O(c) more in a collision node of c keys.
    func contains(_ key: Key) -> Bool {
        guard let root else { return false }
        return Self.find(key, hash: Node.hash(key), in: root) != nil
    }

    /// Whether both tries are the same version: they share their root, so they hold the same keys and values.
    /// `false` does not prove they differ.
    ///
    /// - Complexity: O(1).
    func isIdentical(to other: HashTrie<Key, Value>) -> Bool {
        root === other.root
    }

    /// The stored pair for `key` under `root`, whose level starts at hash bit 0.
    ///
    /// - Complexity: O(log₃₂ n) expected; O(c) more in a collision node of c keys.
    static func find(_ key: Key, hash: UInt64, in root: Node) -> Node.Item? {
        var node = root
        var shift = 0
        while true {
            let bit = Node.bit(hash, shift: shift)
            if node.itemMap & bit != 0 {
                let item = node.items[node.itemPosition(bit)]
                return item.key == key ? item : nil
            }
            guard node.childMap & bit != 0 else { return nil }
            node = node.children[node.childPosition(bit)]
            shift += Node.bitsPerLevel
            if node.isCollision {
                // A collision node is reached only on its own hash prefix, but its hash may still differ from the
                // one sought below that prefix, so the keys are compared anyway.
                return node.items.first { $0.key == key }
            }
        }
    }
}

extension HashTrie: Sendable where Key: Sendable, Value: Sendable {}

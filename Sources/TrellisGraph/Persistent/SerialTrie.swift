import TrellisCore

/// A persistent map from `UInt64` keys to values: a bitmap-compressed radix trie, 64-way per level.
///
/// Made for dense serial numbers. The trie is only as tall as its largest key needs (keys below 2^24 take a root and
/// three levels, four node visits), and iteration runs in ascending key order.
///
/// ```
/// height 2: key = [ b17…b12 | b11…b6 | b5…b0 ]
///                    root  ─►  interior ─► leaf (items)
/// ```
///
/// It is a value: copying is O(1) and copies share nodes; a mutation copies only the nodes on the path to the key
/// that other copies still see (`isKnownUniquelyReferenced` at every level), and changes uniquely held nodes in place.
/// `SerialTrie<Void>` is a set whose elements cost nothing beyond their bit in a leaf's bitmap.
///
/// ```swift
/// var table = SerialTrie<String>()
/// table[1] = "first"
/// let before = table          // O(1); `before` never changes
/// table[2] = "second"         // copies the root-to-leaf path only
/// ```
@usableFromInline package struct SerialTrie<Value> {
    @usableFromInline typealias Node = SerialTrieNode<Value>

    /// The root, or `nil` when empty; never an empty node otherwise.
    @usableFromInline var root: Node?

    /// The level of the root (leaves are level 0). Always the smallest that fits the largest key, so a root above
    /// level 0 occupies some slot other than 0.
    @usableFromInline var height: Int

    /// Backing store for `count` (the tail's key included), kept outside the nodes so that `count` is O(1).
    var storedCount: Int

    /// The entry with the largest key, held beside the nodes rather than in them, or nil. Keys written in ascending
    /// order (an entity's newest leaf) are written here again and again: a write under a snapshot then copies this
    /// entry's value, not a root-to-leaf path of nodes whose every copy retains 64 items or children. It goes into
    /// the nodes when a larger key arrives. Every key in the nodes is below it.
    @usableFromInline var tail: Tail?

    /// The entry `tail` holds.
    @usableFromInline struct Tail {
        @usableFromInline var key: UInt64
        @usableFromInline var value: Value
    }

    /// An empty trie; allocates nothing.
    ///
    /// - Complexity: O(1).
    package init() {
        root = nil
        height = 0
        storedCount = 0
        tail = nil
    }

    /// The number of keys.
    ///
    /// - Complexity: O(1).
    @usableFromInline package var count: Int { storedCount }

    /// Whether the trie holds no keys.
    ///
    /// - Complexity: O(1).
    package var isEmpty: Bool { storedCount == 0 }

    /// The value for `key`; setting `nil` removes the key.
    ///
    /// - Complexity: O(h) node visits, where h ≤ 11 is the height (4 for keys below 2^24); a write also copies the
    ///   nodes on the path that are shared with other copies, O(64) each.
    package subscript(key: UInt64) -> Value? {
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
    /// - Complexity: O(h), h ≤ 11.
    @inline(__always)
    package func value(forKey key: UInt64) -> Value? {
        if let tail, tail.key == key { return tail.value }
        guard let root else { return nil }
        return Self.item(forKey: key, root: root, height: height)
    }

    /// The value for `key` among the nodes under `root` (a trie's tail aside), or `nil`: `value(forKey:)` for a caller
    /// that reads a trie's fields in place rather than copying the trie.
    ///
    /// - Complexity: O(h), h ≤ 11.
    @inline(__always)
    static func item(forKey key: UInt64, root: Node, height: Int) -> Value? {
        withExtendedLifetime(root) {
            guard let (node, position) = Self.slot(forKey: key, root: root, height: height) else { return nil }
            return node._withUnsafeGuaranteedRef { $0.item(at: position) }
        }
    }

    /// The address of the value for `key` among the nodes under `root` (a trie's tail aside), in its node, or nil:
    /// `item(forKey:root:height:)` without copying the value (a copy retains every reference it holds).
    ///
    /// The address is valid while `root` lives and no node under it changes: the caller keeps `root` alive (with
    /// `withExtendedLifetime`) and holds a trie value whose nodes are shared or not written during the use. It is
    /// taken out of the node's `ContiguousArray`, whose storage the node owns and which never moves unless the array
    /// is written. A closure given the address inside the array's own `withUnsafeBufferPointer` instead had the
    /// array's storage retained and released around every call.
    ///
    /// - Complexity: O(h), h ≤ 11.
    @inline(__always)
    static func itemAddress(forKey key: UInt64, root: Node, height: Int) -> UnsafePointer<Value>? {
        guard Self.storesItems else { return nil }
        return withExtendedLifetime(root) {
            guard let (node, position) = Self.slot(forKey: key, root: root, height: height) else { return nil }
            return node._withUnsafeGuaranteedRef { n in n.items.withUnsafeBufferPointer { $0.baseAddress! + position } }
        }
    }

    /// The level-0 node under `root` that holds `key`, and the key's position in its items, or nil. Nodes below the
    /// root live as long as the root does: the descent visits them unretained (a retain and a release per level cost
    /// more than the level's work), and the caller keeps `root` alive while it uses the node.
    ///
    /// - Complexity: O(h), h ≤ 11.
    @inline(__always)
    static func slot(forKey key: UInt64, root: Node, height: Int) -> (node: Unmanaged<Node>, position: Int)? {
        guard Self.fits(key, height: height) else { return nil }
        var node = Unmanaged.passUnretained(root)
        var level = height
        while true {
            let index = Node.index(of: key, level: level)
            let step: (found: Bool, next: Unmanaged<Node>?) = node._withUnsafeGuaranteedRef { n in
                guard n.bitmap & (1 &<< UInt64(index)) != 0 else { return (false, nil) }
                if level == 0 { return (true, nil) }
                let position = n.position(ofSlot: index)
                return (true, n.children.withUnsafeBufferPointer { Unmanaged.passUnretained($0[position]) })
            }
            guard step.found else { return nil }
            guard let next = step.next else {
                return (node, node._withUnsafeGuaranteedRef { $0.position(ofSlot: index) })
            }
            node = next
            level -= 1
        }
    }

    /// Whether values take storage in the nodes (see `SerialTrieNode.storesItems`).
    static var storesItems: Bool { Node.storesItems }

    /// Whether `key` is present; unlike `value(forKey:) != nil` it also works when `Value` is itself optional.
    ///
    /// - Complexity: O(h), h ≤ 11.
    package func contains(_ key: UInt64) -> Bool {
        if let tail, tail.key == key { return true }
        return nodesContain(key)
    }

    /// Whether the nodes hold `key` (the tail aside).
    ///
    /// - Complexity: O(h), h ≤ 11.
    func nodesContain(_ key: UInt64) -> Bool {
        guard var node = root, Self.fits(key, height: height) else { return false }
        var level = height
        while true {
            let index = Node.index(of: key, level: level)
            guard node.bitmap & (1 &<< UInt64(index)) != 0 else { return false }
            if level == 0 { return true }
            node = node.children[node.position(ofSlot: index)]
            level -= 1
        }
    }

    /// Whether both tries are the same version: they share their root, so they hold the same keys and values.
    /// `false` does not prove they differ.
    ///
    /// - Complexity: O(1).
    package func isIdentical(to other: SerialTrie<Value>) -> Bool {
        // Two tails cannot be compared without comparing values: only tries without one are known identical.
        root === other.root && tail == nil && other.tail == nil
    }

    /// Whether a trie of the given height can hold `key`.
    ///
    /// - Complexity: O(1).
    static func fits(_ key: UInt64, height: Int) -> Bool {
        // The smart shift yields 0 once the shift passes 63, which is what the top level needs.
        key >> UInt64(Node.bitsPerLevel * (height + 1)) == 0
    }

    /// The smallest height that can hold `key`.
    ///
    /// - Complexity: O(1).
    static func height(for key: UInt64) -> Int {
        key == 0 ? 0 : (UInt64.bitWidth - 1 - key.leadingZeroBitCount) / Node.bitsPerLevel
    }
}

extension SerialTrie: Sendable where Value: Sendable {}
extension SerialTrie.Tail: Sendable where Value: Sendable {}

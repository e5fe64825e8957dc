import TrellisCore

/// One node of a `HashTrie`: either a bitmap node (32 slots addressed by five bits of the key's hash) or a collision
/// node (keys whose full hashes are equal).
///
/// ```
/// bitmap node    itemMap  0b…0100_0001   slot i holds a key–value pair inline
///                childMap 0b…0001_0000   slot i holds a subtree (never both bits)
///                items    [(k0, v0), (k6, v6)]    in slot order
///                children [n4]                   in slot order
/// collision node itemMap 0, childMap 0, items [(k, v), (k′, v′), …], all with one hash, in insertion order
/// ```
///
/// Empty arrays share the empty singleton, so a node of inline pairs costs one object and one array. Hashes are not
/// stored: that saves eight bytes per entry, and only splits (rare) and collision checks hash a key again.
///
/// A node reachable from more than one trie value is never mutated (mutation copies it first), which is what makes
/// the unchecked `Sendable` conformance sound.
final class HashTrieNode<Key: Hashable, Value>: @unchecked Sendable {
    typealias Item = (key: Key, value: Value)

    /// Slots holding an inline pair.
    var itemMap: UInt32
    /// Slots holding a subtree.
    var childMap: UInt32
    var items: ContiguousArray<Item>
    var children: ContiguousArray<HashTrieNode<Key, Value>>

    /// A node with the given contents; the default is an empty root.
    ///
    /// - Complexity: O(1).
    init(
        itemMap: UInt32 = 0,
        childMap: UInt32 = 0,
        items: ContiguousArray<Item> = [],
        children: ContiguousArray<HashTrieNode<Key, Value>> = []
    ) {
        self.itemMap = itemMap
        self.childMap = childMap
        self.items = items
        self.children = children
    }

    /// A shallow copy; the arrays share storage until one side writes.
    ///
    /// - Complexity: O(1) here; the first write to a copied array costs O(its length).
    @inline(never)
    func copy() -> HashTrieNode<Key, Value> {
        HashTrieNode(itemMap: itemMap, childMap: childMap, items: items, children: children)
    }

    /// Whether this is a collision node. Below the root a bitmap node is never empty, so empty maps are the mark.
    ///
    /// - Complexity: O(1).
    var isCollision: Bool { itemMap | childMap == 0 }

    /// Whether the subtree holds exactly one pair; such a node is never left below another node.
    ///
    /// - Complexity: O(1).
    var isSingleItem: Bool { items.count == 1 && children.isEmpty }

    /// Whether a bitmap node holds nothing but one collision node; such a node is replaced by that collision node.
    ///
    /// - Complexity: O(1).
    var isCollisionWrapper: Bool { itemMap == 0 && children.count == 1 && children[0].isCollision }

    /// The position in `items` of the slot marked by `bit`.
    ///
    /// - Complexity: O(1).
    @inline(__always)
    func itemPosition(_ bit: UInt32) -> Int { (itemMap & (bit &- 1)).nonzeroBitCount }

    /// The position in `children` of the slot marked by `bit`.
    ///
    /// - Complexity: O(1).
    @inline(__always)
    func childPosition(_ bit: UInt32) -> Int { (childMap & (bit &- 1)).nonzeroBitCount }
}

extension HashTrieNode {
    /// Hash bits consumed per level; a 64-bit hash spans 13 levels, the last one four bits wide.
    static var bitsPerLevel: Int { 5 }

    /// The 64 bits of `key`'s hash (`hashValue`, so seeded per process: shapes are not stable across runs).
    ///
    /// - Complexity: O(1) plus hashing the key.
    @inline(__always)
    static func hash(_ key: Key) -> UInt64 {
        UInt64(UInt(bitPattern: key.hashValue))
    }

    /// The slot bit of `hash` in a node whose level starts at bit `shift`.
    ///
    /// - Complexity: O(1).
    @inline(__always)
    static func bit(_ hash: UInt64, shift: Int) -> UInt32 {
        1 &<< UInt32(truncatingIfNeeded: (hash &>> UInt64(shift)) & 31)
    }

    /// The smallest subtree at level `shift` that holds two pairs with different keys.
    ///
    /// - Complexity: O(1) per level the two hashes share, at most 13.
    @inline(never)
    static func pair(
        _ first: Item, _ firstHash: UInt64, _ second: Item, _ secondHash: UInt64, shift: Int
    ) -> HashTrieNode {
        if firstHash == secondHash { return HashTrieNode(items: [first, second]) }
        let firstBit = bit(firstHash, shift: shift)
        let secondBit = bit(secondHash, shift: shift)
        if firstBit == secondBit {
            let child = pair(first, firstHash, second, secondHash, shift: shift + bitsPerLevel)
            return HashTrieNode(childMap: firstBit, children: [child])
        }
        let items: ContiguousArray<Item> = firstBit < secondBit ? [first, second] : [second, first]
        return HashTrieNode(itemMap: firstBit | secondBit, items: items)
    }

    /// The smallest subtree at level `shift` that holds a collision node and one pair of another hash.
    ///
    /// - Complexity: O(1) per level the two hashes share, at most 13.
    @inline(never)
    static func split(
        _ collision: HashTrieNode, _ collisionHash: UInt64, _ item: Item, _ itemHash: UInt64, shift: Int
    ) -> HashTrieNode {
        let collisionBit = bit(collisionHash, shift: shift)
        let itemBit = bit(itemHash, shift: shift)
        if collisionBit == itemBit {
            let child = split(collision, collisionHash, item, itemHash, shift: shift + bitsPerLevel)
            return HashTrieNode(childMap: collisionBit, children: [child])
        }
        return HashTrieNode(itemMap: itemBit, childMap: collisionBit, items: [item], children: [collision])
    }
}

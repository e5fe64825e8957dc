import TrellisCore

/// One node of a `SerialTrie`: 64 slots addressed by six bits of the key, of which only the occupied ones are stored.
///
/// ```
/// bitmap    0b…0010_0101         bit i set ⇔ slot i occupied
/// leaf      items    [v0, v2, v5] the elements, in slot order
/// interior  children [n0, n2, n5] the nodes one level down, in slot order
/// ```
///
/// One class serves both kinds so that a child array is homogeneous and needs no dynamic casts; the unused array of
/// each kind is the shared empty singleton and costs no allocation. The trie knows a node's kind from its depth.
///
/// A node that is reachable from more than one trie value is never mutated (mutation copies it first), which is what
/// makes the unchecked `Sendable` conformance sound.
@usableFromInline final class SerialTrieNode<Value>: @unchecked Sendable {
    // No run-time exclusivity checks: a node is written only while one trie value holds it (see above), so no read
    // can overlap a write, and a check on every level of a lookup cost more than the level's work.

    /// Bit `i` is set when slot `i` is occupied.
    @usableFromInline @exclusivity(unchecked) var bitmap: UInt64
    /// Leaf elements in slot order; always empty for interior nodes and for zero-sized `Value`s.
    @usableFromInline @exclusivity(unchecked) var items: ContiguousArray<Value>
    /// Interior children in slot order; always empty for leaves.
    @usableFromInline @exclusivity(unchecked) var children: ContiguousArray<SerialTrieNode<Value>>

    /// A node with the given contents; the default is empty, a state that lasts only until the insertion that made it
    /// fills it.
    ///
    /// - Complexity: O(1).
    init(
        bitmap: UInt64 = 0,
        items: ContiguousArray<Value> = [],
        children: ContiguousArray<SerialTrieNode<Value>> = []
    ) {
        self.bitmap = bitmap
        self.items = items
        self.children = children
        #if TRELLIS_COUNT_NODES
        NodeCount.allocated()
        #endif
    }

    /// A shallow copy; the arrays share storage until one side writes.
    ///
    /// - Complexity: O(1) here; the first write to a copied array costs O(64).
    @inline(never)
    func copy() -> SerialTrieNode<Value> {
        SerialTrieNode(bitmap: bitmap, items: items, children: children)
    }
}

extension SerialTrieNode {
    /// Bits of the key consumed per level.
    @inlinable static var bitsPerLevel: Int { 6 }

    /// The deepest possible root height: level 10 holds key bits 60...63.
    static var maximumHeight: Int { 10 }

    /// Whether elements take storage at all. A zero-sized `Value` (such as `Void` in a set) has exactly one value, so
    /// the bitmap alone records everything and `items` stays empty.
    @inlinable static var storesItems: Bool { MemoryLayout<Value>.size != 0 }

    /// The slot of `key` in a node at `level` (leaves are level 0).
    ///
    /// - Complexity: O(1).
    @inline(__always)
    static func index(of key: UInt64, level: Int) -> Int {
        Int(truncatingIfNeeded: (key &>> UInt64(bitsPerLevel * level)) & 63)
    }

    /// The position in `items` or `children` of the occupied slot `index`: the number of occupied slots below it.
    ///
    /// - Complexity: O(1).
    @inline(__always)
    func position(ofSlot index: Int) -> Int {
        (bitmap & ((1 &<< UInt64(index)) &- 1)).nonzeroBitCount
    }

    /// The element at `position` of a leaf.
    ///
    /// - Complexity: O(1).
    @inlinable @inline(__always)
    func item(at position: Int) -> Value {
        guard Self.storesItems else { return Self.zeroSizedValue }
        return items[position]
    }

    /// Stores `value` as the new element at `position` of a leaf.
    ///
    /// - Complexity: O(64).
    func insertItem(_ value: Value, at position: Int) {
        guard Self.storesItems else { return }
        items.insertGrowingSlowly(value, at: position)
    }

    /// Drops the element at `position` of a leaf.
    ///
    /// - Complexity: O(64).
    func removeItem(at position: Int) {
        guard Self.storesItems else { return }
        items.remove(at: position)
    }

    /// Gives `body` the element at `position` in place, so a copy-on-write element stays uniquely referenced.
    ///
    /// - Complexity: O(1) plus `body`.
    @inline(__always)
    func modifyItem<R>(at position: Int, _ body: (inout Value) throws -> R) rethrows -> R {
        guard Self.storesItems else {
            var value = Self.zeroSizedValue
            return try body(&value)
        }
        return try body(&items[position])
    }

    /// The one value of a zero-sized type. Such a type has no bits, so every value of it is the same value, and a
    /// bit cast from the empty tuple (also zero-sized) produces it.
    @usableFromInline static var zeroSizedValue: Value {
        unsafeBitCast((), to: Value.self)
    }
}

import TrellisCore

extension ContiguousArray {
    /// Inserts `element` at `index`, growing a full buffer by a quarter instead of doubling it.
    ///
    /// The arrays inside persistent nodes are small (a few dozen elements), numerous and mostly read. Doubling can
    /// leave half of a node's buffer unused for good, while a reallocation here costs about what the O(n)
    /// shift of an insertion into a node costs anyway.
    ///
    /// - Complexity: O(n).
    mutating func insertGrowingSlowly(_ element: Element, at index: Int) {
        if count == capacity { reserveCapacity(count + count / 4 + 1) }
        insert(element, at: index)
    }
}

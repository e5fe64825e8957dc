import TrellisCore

extension Leaf {
    /// The live rows of this leaf the predicate selects, as a mask.
    /// - Complexity: O(t) passes over 64 values for t comparisons; `and` and `or` skip their right side when the left
    ///   one already decides.
    func rows(matching predicate: ColumnPredicate) -> UInt64 {
        switch predicate {
        case .constant(let all): return all ? present : 0
        case .and(let a, let b):
            let left = rows(matching: a)
            return left == 0 ? 0 : left & rows(matching: b)
        case .or(let a, let b):
            let left = rows(matching: a)
            return left == present ? left : left | rows(matching: b)
        case .not(let a): return present & ~rows(matching: a)
        case .compare(let attribute, let op, let operand): return rows(attribute, op, operand)
        }
    }

    /// The live rows whose attribute stands in relation `op` to `operand`.
    /// - Complexity: one pass over 64 values.
    @inline(__always)
    func rows(_ attribute: Int, _ op: ComparisonOperator, _ operand: ColumnPredicate.Operand) -> UInt64 {
        // Through a buffer pointer the column is borrowed in place: no copy of the struct, no retain of its arrays.
        present & columns.withUnsafeBufferPointer { $0[attribute].rows(op, operand) }
    }
}

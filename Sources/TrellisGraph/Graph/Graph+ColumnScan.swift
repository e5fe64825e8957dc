import TrellisCore

/// How a value compares with another: the operator of a `ColumnPredicate` term, and of the query layer's
/// `QueryExpression.compare`.
package enum ComparisonOperator: Sendable {
    case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual
}

/// A predicate over one entity's own attributes that a leaf evaluates a column at a time: each comparison turns one
/// column's 64 values into a 64-bit mask of matching rows, and `and`, `or` and `not` combine masks, so no `Value` is
/// made and no row is visited one by one.
///
/// A row matches exactly when `QueryEvaluator` would find the equivalent `QueryExpression` `.bool(true)`:
/// - `== null` matches the null rows and `!= null` the others; `<`, `<=`, `>`, `>=` against null match nothing;
/// - `!= c` for a non-null `c` also matches the null rows (null differs from every value); the other comparisons
///   never match a null row;
/// - doubles and dates follow `Value.compare`: NaN equals NaN and sorts above every number, and -0.0 equals 0.0.
package indirect enum ColumnPredicate: Sendable {
    /// A constant typed for the column it is compared with.
    package enum Operand: Sendable {
        case null
        case bool(Bool)
        case int(Int64)
        case double(Double)
        /// A date as seconds since the reference date, which is how date columns store it.
        case date(Double)
    }

    /// Every live row (true) or none (false).
    case constant(Bool)
    /// Attribute `attribute` of the row compared with a constant, the attribute on the left.
    case compare(attribute: Int, ComparisonOperator, Operand)
    case and(ColumnPredicate, ColumnPredicate)
    case or(ColumnPredicate, ColumnPredicate)
    case not(ColumnPredicate)
}

extension Graph {
    /// Calls `body` with every leaf of the entity that has matching rows, in ascending key order, with the mask of
    /// its matching rows (bit `r` is serial `key << 6 | r`); rows whose bit is set in `excluded[key]` are left out.
    /// `body` returns false to stop.
    /// - Complexity: O(L × t) for L leaves and t comparisons, each a pass over 64 values of one column.
    package func forEachMatchingLeaf(
        entity: UInt32, where predicate: ColumnPredicate, excluding excluded: [UInt64: UInt64] = [:],
        _ body: (_ key: UInt64, _ leaf: Leaf, _ rows: UInt64) -> Bool
    ) {
        forEachLeaf(entity: entity) { key, leaf in
            var rows = leaf.rows(matching: predicate)
            if !excluded.isEmpty, let out = excluded[key] { rows &= ~out }
            return rows == 0 || body(key, leaf, rows)
        }
    }

    /// The number of live objects of the entity the predicate selects, leaving out the rows set in `excluded`.
    /// - Complexity: O(L × t) for L leaves and t comparisons; allocates nothing.
    package func countRows(
        entity: UInt32, where predicate: ColumnPredicate, excluding excluded: [UInt64: UInt64] = [:]
    ) -> Int {
        var total = 0
        if excluded.isEmpty, case .compare(let attribute, let op, let operand) = predicate {
            // One comparison, nothing excluded (a snapshot's count): the loop W7's `count(where flag == true)` runs,
            // kept free of the predicate's indirect cases, whose boxes cost a retain and a release per leaf.
            forEachLeaf(entity: entity) { _, leaf in
                total &+= leaf.rows(attribute, op, operand).nonzeroBitCount
                return true
            }
            return total
        }
        forEachLeaf(entity: entity) { key, leaf in
            var rows = leaf.rows(matching: predicate)
            if !excluded.isEmpty, let out = excluded[key] { rows &= ~out }
            total &+= rows.nonzeroBitCount
            return true
        }
        return total
    }

    /// Calls `body` with every leaf of the entity in ascending key order until it returns false. Leaves are lent in
    /// place from their trie nodes: the trie's own iteration hands out copies, and a copied leaf costs a retain and a
    /// release of its column and link arrays, more than evaluating a one-term predicate on it.
    private func forEachLeaf(entity: UInt32, _ body: (_ key: UInt64, _ leaf: Leaf) -> Bool) {
        guard Int(entity) < tables.count, let root = tables[Int(entity)].leaves.root else { return }
        _ = Self.forEachLeaf(in: root, level: tables[Int(entity)].leaves.height, prefix: 0, body)
    }

    private static func forEachLeaf(
        in node: SerialTrieNode<Leaf>, level: Int, prefix: UInt64, _ body: (UInt64, Leaf) -> Bool
    ) -> Bool {
        let shift = UInt64(SerialTrieNode<Leaf>.bitsPerLevel * level)
        var unvisited = node.bitmap
        if level > 0 {
            var position = 0
            while unvisited != 0 {
                let key = prefix | (UInt64(unvisited.trailingZeroBitCount) &<< shift)
                if !forEachLeaf(in: node.children[position], level: level - 1, prefix: key, body) { return false }
                unvisited &= unvisited &- 1
                position += 1
            }
            return true
        }
        return node.items.withUnsafeBufferPointer { items in
            var position = 0
            while unvisited != 0 {
                if !body(prefix | UInt64(unvisited.trailingZeroBitCount), items[position]) { return false }
                unvisited &= unvisited &- 1
                position += 1
            }
            return true
        }
    }

    /// The number of live objects whose attribute equals `value` (`QueryEvaluator`'s equality), or nil when the value
    /// does not fit the attribute's column.
    /// - Complexity: O(L) for L leaves.
    func countRows(entity: UInt32, where attribute: Int, equals value: Value) -> Int? {
        guard Int(entity) < tables.count,
            let operand = ColumnPredicate.Operand(value, for: layout(entity).attributes[attribute].type)
        else { return nil }
        return countRows(entity: entity, where: .compare(attribute: attribute, .equal, operand))
    }
}

extension ColumnPredicate.Operand {
    /// The operand for comparing a column of attribute type `type` with `value`, or nil when the column path cannot
    /// reproduce `Value.compare` for this pair (an integer column against a fraction, a string column, …).
    package init?(_ value: Value, for type: AttributeType) {
        switch (Column.Kind(type), value) {
        case (_, .null): self = .null
        case (.bool, .bool(let b)): self = .bool(b)
        case (.int, .int(let i)): self = .int(i)
        case (.double, .double(let d)): self = .double(d)
        // `Value.compare` orders an int against a double by converting the int, exactly as this does.
        case (.double, .int(let i)): self = .double(Double(i))
        case (.date, .date(let d)): self = .date(d.timeIntervalSinceReferenceDate)
        default: return nil
        }
    }
}

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

extension Column {
    /// The rows of all 64 (live or not) whose value stands in relation `op` to `operand`.
    func rows(_ op: ComparisonOperator, _ operand: ColumnPredicate.Operand) -> UInt64 {
        let matches: UInt64
        switch (kind, operand) {
        case (_, .null):
            // Null equals only null; every ordering against null is false (the evaluator's rule for optionals).
            switch op {
            case .equal: return nulls
            case .notEqual: return ~nulls
            default: return 0
            }
        case (.bool, .bool(let c)): matches = Self.rows(bits: bits, op, c)
        case (.int, .int(let c)): matches = ints.withUnsafeBufferPointer { Self.rows($0, op, c) }
        case (.double, .double(let c)), (.date, .date(let c)):
            matches = doubles.withUnsafeBufferPointer { c.isNaN ? Self.rows(nanOperand: $0, op) : Self.rows($0, op, c) }
        default: preconditionFailure("Trellis: a column predicate compiled for another kind of column")
        }
        // The slots of null rows hold stale or zero values: a null differs from every value, so `!=` takes them all
        // and every other comparison none.
        return op == .notEqual ? matches | nulls : matches & ~nulls
    }

    /// `Value.compare` on booleans: false < true.
    private static func rows(bits: UInt64, _ op: ComparisonOperator, _ c: Bool) -> UInt64 {
        switch op {
        case .equal: return c ? bits : ~bits
        case .notEqual: return c ? ~bits : bits
        case .less: return c ? ~bits : 0
        case .lessOrEqual: return c ? ~0 : ~bits
        case .greater: return c ? 0 : bits
        case .greaterOrEqual: return c ? bits : ~0
        }
    }

    /// Integers, and doubles or dates against a number. Written with `<`, `<=` and `==` only, so that a NaN value
    /// counts as greater than a number, as `Value.compare` orders doubles and dates.
    @inline(__always)
    private static func rows<T: Comparable>(
        _ values: UnsafeBufferPointer<T>, _ op: ComparisonOperator, _ c: T
    ) -> UInt64 {
        switch op {
        case .equal: return select(values) { $0 == c }
        case .notEqual: return select(values) { !($0 == c) }
        case .less: return select(values) { $0 < c }
        case .lessOrEqual: return select(values) { $0 <= c }
        case .greater: return select(values) { !($0 <= c) }
        case .greaterOrEqual: return select(values) { !($0 < c) }
        }
    }

    /// Doubles or dates against NaN, which `Value.compare` puts above every number and equal to itself.
    private static func rows(nanOperand values: UnsafeBufferPointer<Double>, _ op: ComparisonOperator) -> UInt64 {
        switch op {
        case .equal, .greaterOrEqual: return select(values) { $0.isNaN }
        case .notEqual, .less: return select(values) { !$0.isNaN }
        case .lessOrEqual: return ~0
        case .greater: return 0
        }
    }

    /// Bit `i` set where `test(values[i])`; a branch-free pass the compiler can vectorise.
    @inline(__always)
    private static func select<T>(_ values: UnsafeBufferPointer<T>, _ test: (T) -> Bool) -> UInt64 {
        var mask: UInt64 = 0
        for i in 0..<values.count {
            mask |= UInt64(test(values[i]) ? 1 : 0) &<< UInt64(i)
        }
        return mask
    }
}

import TrellisCore

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
        case (.int, .int(let c)): matches = withInts { Self.rows($0, op, c) }
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

import TrellisCore

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

extension ColumnPredicate.Operand {
    /// The operand for comparing a column of attribute type `type` with `value`, or nil when the column path cannot
    /// reproduce `Value.compare` for this pair (an integer column against a fraction, a string column, …).
    package init?(_ value: Value, for type: AttributeType) {
        switch (Column.Kind(type), value) {
        case (_, .null): self = .null
        case (.bool, .bool(let b)): self = .bool(b)
        case (.int, .int(let i)): self = .int(i)
        case (.double, .double(let d)): self = .double(d)
        // `Value.compare` orders an int against a double by their exact values: the int converts only when no
        // rounding changes it (below 2^53 in magnitude, or a power of two); otherwise the evaluator compares.
        case (.double, .int(let i)):
            let d = Double(i)
            guard Value.compareExactly(i, d) == 0 else { return nil }
            self = .double(d)
        case (.date, .date(let d)): self = .date(d.timeIntervalSinceReferenceDate)
        default: return nil
        }
    }
}

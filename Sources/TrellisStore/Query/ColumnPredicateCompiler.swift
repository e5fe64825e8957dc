import TrellisCore
import TrellisGraph
import TrellisJournal

extension ColumnPredicate {
    /// More `IN` values than this are left to the row evaluator: each one is another pass over the column.
    static let maximumListCount = 16

    /// The column form of a compiled predicate over objects of `layout`, or nil when some part of it is not a
    /// comparison of the object's own attribute with a constant (a path, a relationship, arithmetic, a string
    /// comparison, …), which the row evaluator then handles.
    ///
    /// Every translation keeps `QueryEvaluator.test`'s result: a row matches when the expression evaluates to
    /// `.bool(true)`, so `and`, `or` and `not` are the mask operations on the parts' matches.
    init?(_ expression: QueryExpression, layout: EntityLayout) {
        func operand(_ a: Int, _ v: Value) -> Operand? { Operand(v, for: layout.attributes[a].type) }
        switch expression {
        case .constant(let v):
            self = .constant(v == .bool(true))
        case .attribute(0, [], let a) where layout.attributes[a].type == .bool:
            // A bare Bool key path (`$0.flag`) is true only for a stored true.
            self = .compare(attribute: a, .equal, .bool(true))
        case .compare(let op, .attribute(0, [], let a), .constant(let v)):
            guard let o = operand(a, v) else { return nil }
            self = .compare(attribute: a, op, o)
        case .compare(let op, .constant(let v), .attribute(0, [], let a)):
            // `Value.compare` is a total order (antisymmetric, NaN included), so `c < x` is exactly `x > c`.
            guard let o = operand(a, v) else { return nil }
            self = .compare(attribute: a, op.flipped, o)
        case .isIn(.attribute(0, [], let a), let values):
            // The evaluator's `Set.contains` uses `Value`'s equality, the same as `==` term by term.
            guard values.count <= Self.maximumListCount else { return nil }
            var terms: [ColumnPredicate] = []
            for v in values {
                guard let o = operand(a, v) else { return nil }
                terms.append(.compare(attribute: a, .equal, o))
            }
            guard var result = terms.popLast() else {
                self = .constant(false)
                return
            }
            while let next = terms.popLast() { result = .or(next, result) }
            self = result
        case .and(let a, let b):
            guard let l = ColumnPredicate(a, layout: layout), let r = ColumnPredicate(b, layout: layout) else {
                return nil
            }
            self = .and(l, r)
        case .or(let a, let b):
            guard let l = ColumnPredicate(a, layout: layout), let r = ColumnPredicate(b, layout: layout) else {
                return nil
            }
            self = .or(l, r)
        case .not(let a):
            guard let inner = ColumnPredicate(a, layout: layout) else { return nil }
            self = .not(inner)
        default:
            return nil
        }
    }
}

extension QueryExpression.Comparison {
    /// The comparison with its sides swapped: `c < x` is `x > c`.
    var flipped: QueryExpression.Comparison {
        switch self {
        case .equal, .notEqual: return self
        case .less: return .greater
        case .lessOrEqual: return .greaterOrEqual
        case .greater: return .less
        case .greaterOrEqual: return .lessOrEqual
        }
    }
}

/// How a value compares with another: the operator of a `ColumnPredicate` term, and of the query layer's
/// `QueryExpression.compare`.
package enum ComparisonOperator: Sendable {
    case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual
}

import TrellisCore
import TrellisGraph
import TrellisJournal

/// A predicate compiled from a Foundation `#Predicate` expression tree into terms the store can evaluate over rows
/// and plan with indexes.
///
/// Objects are reached from *slots*: slot 0 is the object being tested; `contains(where:)` and `allSatisfy` bind
/// further slots. A *hop* list follows to-one relationships from a slot (a nil target makes every read null, as
/// optional chaining does).
indirect enum QueryExpression {
    typealias Comparison = ComparisonOperator

    enum Arithmetic {
        case add, subtract, multiply
    }

    case constant(Value)
    case list(Set<Value>)
    /// The object reached from a slot by hops, as a reference value (null for none).
    case object(slot: Int, hops: [Int])
    case attribute(slot: Int, hops: [Int], attribute: Int)
    /// The targets of a to-many relationship; only counted or quantified over.
    case targets(slot: Int, hops: [Int], relationship: Int)
    case count(QueryExpression)
    case compare(Comparison, QueryExpression, QueryExpression)
    case isIn(QueryExpression, Set<Value>)
    case and(QueryExpression, QueryExpression)
    case or(QueryExpression, QueryExpression)
    case not(QueryExpression)
    case coalesce(QueryExpression, QueryExpression)
    /// Null when the first is null, else the second (`Optional.flatMap`).
    case flatMap(QueryExpression, QueryExpression)
    case conditional(QueryExpression, QueryExpression, QueryExpression)
    case arithmetic(Arithmetic, QueryExpression, QueryExpression)
    case negate(QueryExpression)
    case stringContains(QueryExpression, QueryExpression)
    case stringHasPrefix(QueryExpression, QueryExpression)
    /// Whether some (or every) target of a to-many relationship passes a test that reads it from `slot`.
    case quantified(all: Bool, QueryExpression, slot: Int, QueryExpression)
    /// Something the compiler does not understand: the whole predicate is then evaluated by Foundation on objects.
    case opaque

    /// Whether any part is opaque.
    var isOpaque: Bool {
        switch self {
        case .opaque: return true
        case .constant, .list, .object, .attribute, .targets: return false
        case .count(let e), .not(let e), .negate(let e), .isIn(let e, _): return e.isOpaque
        case .compare(_, let a, let b), .and(let a, let b), .or(let a, let b), .coalesce(let a, let b),
            .flatMap(let a, let b), .arithmetic(_, let a, let b), .stringContains(let a, let b),
            .stringHasPrefix(let a, let b), .quantified(_, let a, _, let b):
            return a.isOpaque || b.isOpaque
        case .conditional(let a, let b, let c): return a.isOpaque || b.isOpaque || c.isOpaque
        }
    }

    /// The terms of a top-level conjunction.
    var conjuncts: [QueryExpression] {
        if case .and(let a, let b) = self { return a.conjuncts + b.conjuncts }
        return [self]
    }

    /// An object reference as a value: entity and serial packed into one integer (only compared for equality).
    static func reference(_ id: ObjectID?) -> Value {
        guard let id else { return .null }
        return .int(Int64(bitPattern: UInt64(id.entity) << 48 | id.serial))
    }
}

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
    /// Whether a collection attribute's value (the first) holds an element (the second): `$0.tags.contains("x")`.
    /// Null when the collection is null.
    case elementContains(QueryExpression, QueryExpression)
    /// The value a `[String: String]` or `[String: MetadataValue]` attribute (the first) holds for a key (the
    /// second): `$0.metadata["color"]`. Null when the dictionary is null or has no such key; a key holding
    /// `MetadataValue.null` reads as `metadataNull`.
    case keyValue(QueryExpression, QueryExpression)
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
            .stringHasPrefix(let a, let b), .quantified(_, let a, _, let b), .elementContains(let a, let b),
            .keyValue(let a, let b):
            return a.isOpaque || b.isOpaque
        case .conditional(let a, let b, let c): return a.isOpaque || b.isOpaque || c.isOpaque
        }
    }

    /// The terms of a top-level conjunction: a row matches exactly when every one is true. Optional tests that hold
    /// only for a value are split into "not null" and the test, which the planner can bound an index with.
    var conjuncts: [QueryExpression] {
        switch self {
        case .and(let a, let b): return a.conjuncts + b.conjuncts
        // `$0.due.flatMap { $0 < cutoff } == true`, and `if let d = $0.due { d < cutoff } else { false }` (which
        // Foundation spells `($0.due.flatMap { $0 < cutoff }) ?? false`): true exactly when there is a value and the
        // test is true of it.
        case .compare(.equal, .flatMap(let x, let test), .constant(.bool(true))),
            .compare(.equal, .constant(.bool(true)), .flatMap(let x, let test)),
            .coalesce(.flatMap(let x, let test), .constant(.bool(false))):
            return [.compare(.notEqual, x, .constant(.null))] + test.conjuncts
        default: return [self]
        }
    }

    /// A read the compiler can reason about: an object reached from a slot by hops, or an attribute of it.
    struct Path: Hashable {
        var slot: Int
        var hops: [Int]
        /// Nil for the object itself.
        var attribute: Int?

        /// Whether this read being non-null implies that `other` is: the same read, or an object on the way to it
        /// (a read through a nil object is null).
        func implies(_ other: Path) -> Bool {
            guard slot == other.slot else { return false }
            return other.attribute == nil ? hops.starts(with: other.hops) : self == other
        }
    }

    /// The read this expression is, if it is one.
    var path: Path? {
        switch self {
        case .attribute(let slot, let hops, let a): return Path(slot: slot, hops: hops, attribute: a)
        case .object(let slot, let hops): return Path(slot: slot, hops: hops, attribute: nil)
        default: return nil
        }
    }

    /// The reads known to be non-null wherever this expression evaluates to true (`outcome`), or to anything but
    /// true (`!outcome`): `x != nil` and `x < c` are true only for a value, `x == nil` is false only for one.
    func nonNullPaths(when outcome: Bool) -> Set<Path> {
        func read(_ e: QueryExpression) -> Set<Path> { e.path.map { [$0] } ?? [] }
        switch (self, outcome) {
        case (.compare(.notEqual, let x, .constant(.null)), true), (.compare(.notEqual, .constant(.null), let x), true),
            (.compare(.equal, let x, .constant(.null)), false), (.compare(.equal, .constant(.null), let x), false):
            return read(x)
        case (.compare(.equal, let x, .constant(let v)), true), (.compare(.equal, .constant(let v), let x), true):
            return v.isNull ? [] : read(x)
        case (.compare(let op, let x, let y), true) where op != .equal && op != .notEqual:
            // No ordering holds for a null.
            return read(x).union(read(y))
        case (.elementContains(let x, _), true): return read(x)
        case (.and(let a, let b), true), (.or(let a, let b), false):
            return a.nonNullPaths(when: outcome).union(b.nonNullPaths(when: outcome))
        case (.not(let a), _): return a.nonNullPaths(when: !outcome)
        default: return []
        }
    }

    /// The expression read from the target of the to-one relationship `hop` of slot 0's object instead of from that
    /// object: every read must go through `hop` (`project.name` becomes `name`); nil otherwise.
    func rerooted(through hop: Int) -> QueryExpression? {
        func two(
            _ a: QueryExpression, _ b: QueryExpression, _ make: (QueryExpression, QueryExpression) -> QueryExpression
        ) -> QueryExpression? {
            guard let x = a.rerooted(through: hop), let y = b.rerooted(through: hop) else { return nil }
            return make(x, y)
        }
        switch self {
        case .constant, .list: return self
        case .object(0, let hops) where hops.first == hop: return .object(slot: 0, hops: Array(hops.dropFirst()))
        case .attribute(0, let hops, let a) where hops.first == hop:
            return .attribute(slot: 0, hops: Array(hops.dropFirst()), attribute: a)
        case .compare(let op, let a, let b): return two(a, b) { .compare(op, $0, $1) }
        case .isIn(let a, let values): return a.rerooted(through: hop).map { .isIn($0, values) }
        case .and(let a, let b): return two(a, b) { .and($0, $1) }
        case .or(let a, let b): return two(a, b) { .or($0, $1) }
        case .not(let a): return a.rerooted(through: hop).map { .not($0) }
        case .coalesce(let a, let b): return two(a, b) { .coalesce($0, $1) }
        case .flatMap(let a, let b): return two(a, b) { .flatMap($0, $1) }
        case .arithmetic(let op, let a, let b): return two(a, b) { .arithmetic(op, $0, $1) }
        case .negate(let a): return a.rerooted(through: hop).map { .negate($0) }
        case .stringContains(let a, let b): return two(a, b) { .stringContains($0, $1) }
        case .stringHasPrefix(let a, let b): return two(a, b) { .stringHasPrefix($0, $1) }
        case .elementContains(let a, let b): return two(a, b) { .elementContains($0, $1) }
        case .keyValue(let a, let b): return two(a, b) { .keyValue($0, $1) }
        case .conditional(let t, let a, let b):
            guard let u = t.rerooted(through: hop), let x = a.rerooted(through: hop), let y = b.rerooted(through: hop)
            else { return nil }
            return .conditional(u, x, y)
        default: return nil
        }
    }

    /// What a metadata key holding `MetadataValue.null` reads as, so that it differs from a missing key (null): a
    /// list of one null, which no attribute holds. Ordered against nothing (a different kind from every scalar).
    static let metadataNull: Value = .list([.null])

    /// An object reference as a value: entity and serial packed into one integer (only compared for equality).
    static func reference(_ id: ObjectID?) -> Value {
        guard let id else { return .null }
        return .int(Int64(bitPattern: UInt64(id.entity) << 48 | id.serial))
    }
}

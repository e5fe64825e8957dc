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

/// The row a predicate tests: its ID and its attributes.
protocol QueryRow {
    var id: ObjectID { get }
    func attribute(_ index: Int) -> Value
}

extension Row: QueryRow {
    func attribute(_ index: Int) -> Value { value(at: index) }
}

/// An object read through a view (pending changes included).
struct ViewRow: QueryRow {
    let view: ContextView
    let id: ObjectID

    func attribute(_ index: Int) -> Value { view.value(id, index) ?? .null }
}

/// Evaluates compiled predicates over rows, reading related objects through a view.
struct QueryEvaluator {
    let view: ContextView
    private var slots: [ObjectID?] = [nil]

    init(view: ContextView) { self.view = view }

    mutating func test(_ expression: QueryExpression, _ row: some QueryRow) -> Bool {
        slots[0] = row.id
        return evaluate(expression, row) == .bool(true)
    }

    private func object(_ slot: Int, _ hops: [Int]) -> ObjectID? {
        var id = slots[slot]
        for hop in hops {
            guard let current = id else { return nil }
            id = view.target(current, hop)
        }
        return id
    }

    mutating func evaluate(_ e: QueryExpression, _ row: some QueryRow) -> Value {
        switch e {
        case .constant(let v): return v
        case .list, .targets, .opaque: return .null
        case .object(let slot, let hops): return QueryExpression.reference(object(slot, hops))
        case .attribute(let slot, let hops, let a):
            if slot == 0 && hops.isEmpty { return row.attribute(a) }
            guard let id = object(slot, hops) else { return .null }
            return view.value(id, a) ?? .null
        case .count(.targets(let slot, let hops, let r)):
            guard let id = object(slot, hops) else { return .null }
            return .int(Int64(view.targets(id, r).count))
        case .count: return .null
        case .compare(let op, let a, let b): return .bool(Self.compare(op, evaluate(a, row), evaluate(b, row)))
        case .isIn(let a, let set): return .bool(set.contains(evaluate(a, row)))
        case .and(let a, let b): return .bool(evaluate(a, row) == .bool(true) && evaluate(b, row) == .bool(true))
        case .or(let a, let b): return .bool(evaluate(a, row) == .bool(true) || evaluate(b, row) == .bool(true))
        case .not(let a): return .bool(evaluate(a, row) != .bool(true))
        case .coalesce(let a, let b):
            let v = evaluate(a, row)
            return v.isNull ? evaluate(b, row) : v
        case .flatMap(let a, let b): return evaluate(a, row).isNull ? .null : evaluate(b, row)
        case .conditional(let t, let a, let b):
            return evaluate(t, row) == .bool(true) ? evaluate(a, row) : evaluate(b, row)
        case .arithmetic(let op, let a, let b): return Self.arithmetic(op, evaluate(a, row), evaluate(b, row))
        case .negate(let a):
            switch evaluate(a, row) {
            case .int(let i): return .int(0 &- i)
            case .double(let d): return .double(-d)
            default: return .null
            }
        case .stringContains(let a, let b):
            guard case .string(let s) = evaluate(a, row), case .string(let t) = evaluate(b, row) else { return .null }
            return .bool(s.contains(t))
        case .stringHasPrefix(let a, let b):
            guard case .string(let s) = evaluate(a, row), case .string(let t) = evaluate(b, row) else { return .null }
            return .bool(s.starts(with: t))
        case .quantified(let all, .targets(let slot, let hops, let r), let bound, let test):
            guard let id = object(slot, hops) else { return .bool(all) }
            while slots.count <= bound { slots.append(nil) }
            for t in view.targets(id, r) {
                slots[bound] = t
                if (evaluate(test, row) == .bool(true)) != all { return .bool(!all) }
            }
            return .bool(all)
        case .quantified: return .null
        }
    }

    static func compare(_ op: QueryExpression.Comparison, _ a: Value, _ b: Value) -> Bool {
        switch op {
        case .equal: return a == b
        case .notEqual: return a != b
        default: break
        }
        // Swift compares only non-optional values; a null here came through optional chaining and matches nothing.
        guard !a.isNull, !b.isNull else { return false }
        let c = Value.compare(a, b)
        switch op {
        case .less: return c < 0
        case .lessOrEqual: return c <= 0
        case .greater: return c > 0
        default: return c >= 0
        }
    }

    static func arithmetic(_ op: QueryExpression.Arithmetic, _ a: Value, _ b: Value) -> Value {
        if case .int(let x) = a, case .int(let y) = b {
            switch op {
            case .add: return .int(x &+ y)
            case .subtract: return .int(x &- y)
            case .multiply: return .int(x &* y)
            }
        }
        guard let x = a.doubleValue, let y = b.doubleValue else { return .null }
        switch op {
        case .add: return .double(x + y)
        case .subtract: return .double(x - y)
        case .multiply: return .double(x * y)
        }
    }
}

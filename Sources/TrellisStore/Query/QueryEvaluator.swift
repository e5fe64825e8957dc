import TrellisCore
import TrellisGraph
import TrellisJournal

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
        case .count(let collection):
            // A collection attribute's element count (`isEmpty`); null for a null collection.
            guard case .list(let elements) = evaluate(collection, row) else { return .null }
            return .int(Int64(elements.count))
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
        case .elementContains(let a, let b):
            guard case .list(let elements) = evaluate(a, row) else { return .null }
            let element = evaluate(b, row)
            return .bool(elements.contains(element))
        case .keyValue(let a, let b):
            // Keys ascend: a binary search over the even positions.
            guard case .list(let pairs) = evaluate(a, row), case .string(let key) = evaluate(b, row) else {
                return .null
            }
            var (low, high) = (0, pairs.count / 2)
            while low < high {
                let middle = (low + high) / 2
                guard case .string(let k) = pairs[2 * middle] else { return .null }
                if k == key {
                    return pairs[2 * middle + 1].isNull ? QueryExpression.metadataNull : pairs[2 * middle + 1]
                }
                if k < key { low = middle + 1 } else { high = middle }
            }
            return .null
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
        // Values of different kinds (a metadata string against a number) are unordered, as `MetadataValue` says.
        guard !a.isNull, !b.isNull, a.typeRank == b.typeRank, a != QueryExpression.metadataNull else { return false }
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

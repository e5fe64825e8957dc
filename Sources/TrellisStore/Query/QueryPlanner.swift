import TrellisCore
import TrellisGraph
import TrellisJournal

/// Chooses how a fetch reaches its candidates in the base snapshot: a full scan, or an index probed by the equality,
/// `IN` and range terms of the predicate's top-level conjunction, or an index walked in sort order. Candidate counts
/// come from the index itself (O(log n) per probe), so the choice is by exact numbers, not guesses.
struct QueryPlanner {
    struct Range {
        var lower: Value?
        var lowerInclusive = true
        var upper: Value?
        var upperInclusive = true
    }

    struct Access {
        var kind: QueryPlan.Access = .fullScan
        var index: IndexKey?
        var columns: [Int] = []
        /// Full equality prefixes to probe, in ascending order.
        var prefixes: [[Value]] = [[]]
        /// A range on the column after the prefix.
        var range: Range?
        var reverse = false
        var candidates = 0
        /// Whether the access yields exactly the predicate's matches (every term is an index bound).
        var exact = false
        var bounds: [String] = []
        /// The predicate in column form, for a column scan.
        var columnPredicate: ColumnPredicate?
    }

    private enum Term {
        case equal(Int, Value)
        case among(Int, [Value])
        case bound(Int, QueryExpression.Comparison, Value)
    }

    let snapshot: Graph
    let entity: UInt32
    /// The top-level conjuncts of the compiled predicate that can be planned with.
    let conjuncts: [QueryExpression]
    /// Whether `conjuncts` is the whole predicate (nothing opaque was left out).
    let complete: Bool
    let sort: [SortKey]
    /// `offset + limit`, when there is a limit.
    let window: Int?

    private var layout: EntityLayout { snapshot.schema.layouts[Int(entity)] }

    private func classify(_ e: QueryExpression) -> Term? {
        func usable(_ a: Int, _ v: Value) -> Value? { layout.attributes[a].type.normalized(v) }
        switch e {
        case .compare(.equal, .attribute(0, [], let a), .constant(let v)),
            .compare(.equal, .constant(let v), .attribute(0, [], let a)):
            return usable(a, v).map { .equal(a, $0) }
        case .isIn(.attribute(0, [], let a), let values):
            let normalized = values.compactMap { usable(a, $0) }
            return normalized.count == values.count ? .among(a, Array(Set(normalized)).sorted()) : nil
        case .compare(let op, .attribute(0, [], let a), .constant(let v)) where op != .equal && op != .notEqual:
            guard !v.isNull, let n = usable(a, v) else { return nil }
            return .bound(a, op, n)
        case .compare(let op, .constant(let v), .attribute(0, [], let a)) where op != .equal && op != .notEqual:
            guard !v.isNull, let n = usable(a, v) else { return nil }
            let flipped: [QueryExpression.Comparison: QueryExpression.Comparison] = [
                .less: .greater, .lessOrEqual: .greaterOrEqual, .greater: .less, .greaterOrEqual: .lessOrEqual,
            ]
            return .bound(a, flipped[op]!, n)
        case .attribute(0, [], let a) where layout.attributes[a].type == .bool:
            return .equal(a, .bool(true))
        case .not(.attribute(0, [], let a))
        where layout.attributes[a].type == .bool && !layout.attributes[a].isOptional:
            return .equal(a, .bool(false))
        default:
            return nil
        }
    }

    func choose() -> Access {
        let terms = conjuncts.map(classify)
        var equal: [Int: (Value, Int)] = [:]
        var among: [Int: ([Value], Int)] = [:]
        var ranges: [Int: (Range, [Int])] = [:]
        for (i, term) in terms.enumerated() {
            switch term {
            case .equal(let a, let v)?: if equal[a] == nil { equal[a] = (v, i) }
            case .among(let a, let vs)?: if among[a] == nil { among[a] = (vs, i) }
            case .bound(let a, let op, let v)?:
                var (range, used) = ranges[a] ?? (Range(), [])
                // The tighter bound wins; on a tie, the exclusive one.
                switch op {
                case .greater, .greaterOrEqual:
                    let c = range.lower.map { Value.compare(v, $0) } ?? 1
                    if c > 0 || (c == 0 && op == .greater) {
                        range.lower = v
                        range.lowerInclusive = op == .greaterOrEqual
                    }
                default:
                    let c = range.upper.map { Value.compare(v, $0) } ?? -1
                    if c < 0 || (c == 0 && op == .less) {
                        range.upper = v
                        range.upperInclusive = op == .lessOrEqual
                    }
                }
                ranges[a] = (range, used + [i])
            case nil: break
            }
        }
        let names = layout.attributes.map(\.name)
        var best: Access?
        var ordered: Access?
        for (number, index) in layout.indexes.enumerated() {
            var access = Access(index: IndexKey(entity: entity, index: number), columns: index.columns)
            var used = Set<Int>()
            var singleValued = true
            var depth = 0
            for column in index.columns {
                if let (v, i) = equal[column] {
                    access.prefixes = access.prefixes.map { $0 + [v] }
                    access.bounds.append("\(names[column]) = \(v)")
                    used.insert(i)
                } else if let (vs, i) = among[column], access.prefixes.count * vs.count <= 256 {
                    access.prefixes = access.prefixes.flatMap { p in vs.map { p + [$0] } }
                    access.bounds.append("\(names[column]) IN \(vs.count) values")
                    singleValued = false
                    used.insert(i)
                } else {
                    break
                }
                depth += 1
            }
            if depth < index.columns.count, let (range, uses) = ranges[index.columns[depth]] {
                access.range = range
                access.bounds.append(describe(range, names[index.columns[depth]]))
                used.formUnion(uses)
            }
            let orderable =
                singleValued && depth < index.columns.count
                && (sort.first.map { $0.followsIndexOrder && index.columns[depth] == $0.attribute } ?? false)
            guard depth > 0 || access.range != nil || orderable else { continue }
            access.candidates = count(access)
            access.exact = complete && used.count == conjuncts.count
            if depth > 0 || access.range != nil {
                access.kind =
                    access.range != nil
                    ? .indexRange
                    : (!singleValued
                        ? .indexIn : (index.isUnique && depth == index.columns.count ? .uniqueLookup : .indexEquality))
                if best == nil || access.candidates < best!.candidates { best = access }
            }
            // Walking the index in sort order: the first sort key must be the column after a single-valued prefix.
            if orderable {
                var walk = access
                walk.kind = .orderedIndexScan
                walk.reverse = !sort[0].ascending
                if ordered == nil || walk.candidates < ordered!.candidates { ordered = walk }
            }
        }
        let all = snapshot.count(entity: entity)
        if let ordered {
            let bestCount = best?.candidates ?? all
            let visits = window.map { min(ordered.candidates, $0 * ordered.candidates / max(bestCount, 1)) }
            if ordered.candidates <= bestCount || (visits ?? .max) <= bestCount { return ordered }
        }
        if let best, best.candidates <= all { return best }
        return Access(candidates: all, exact: complete && conjuncts.isEmpty)
    }

    private func describe(_ range: Range, _ name: String) -> String {
        var parts: [String] = []
        if let lower = range.lower { parts.append("\(name) \(range.lowerInclusive ? ">=" : ">") \(lower)") }
        if let upper = range.upper { parts.append("\(name) \(range.upperInclusive ? "<=" : "<") \(upper)") }
        return parts.joined(separator: ", ")
    }

    /// The probe bounds for one prefix: nulls are left out of a range open at the bottom (no Swift comparison matches
    /// them).
    static func bounds(_ prefix: [Value], _ range: Range?) -> (lower: [Value]?, li: Bool, upper: [Value]?, ui: Bool) {
        let whole: [Value]? = prefix.isEmpty ? nil : prefix
        guard let range else { return (whole, true, whole, true) }
        var lower: [Value] = prefix + [.null]
        var li = false
        if let l = range.lower { (lower, li) = (prefix + [l], range.lowerInclusive) }
        guard let u = range.upper else { return (lower, li, whole, true) }
        return (lower, li, prefix + [u], range.upperInclusive)
    }

    func count(_ access: Access) -> Int {
        guard let index = access.index else { return snapshot.count(entity: entity) }
        return access.prefixes.reduce(0) { total, prefix in
            let b = Self.bounds(prefix, access.range)
            return total + snapshot.count(index, from: b.lower, inclusive: b.li, to: b.upper, inclusive: b.ui)
        }
    }

    /// The candidate IDs of an index access, prefix by prefix (each prefix in index order).
    static func scan(_ snapshot: Graph, _ access: Access, limit: Int = .max) -> [ObjectID] {
        guard let index = access.index else { return [] }
        var out: [ObjectID] = []
        let prefixes = access.reverse ? access.prefixes.reversed() : access.prefixes
        for prefix in prefixes {
            let b = bounds(prefix, access.range)
            out += snapshot.scan(
                index, from: b.lower, inclusive: b.li, to: b.upper, inclusive: b.ui, reverse: access.reverse,
                limit: limit - out.count)
            if out.count >= limit { break }
        }
        return out
    }
}

import TrellisCore
import TrellisGraph
import TrellisJournal

/// Chooses how a fetch reaches its candidates in the base snapshot: a full scan, or an index probed by the equality,
/// `IN` and range terms of the predicate's top-level conjunction, or an index walked in sort order, or the objects
/// pointing at the related objects that a condition on a to-one path (`project.name == "X"`) selects. Candidate counts
/// come from the index itself (O(log n) per probe), so the choice is by exact numbers, not guesses.
struct QueryPlanner {
    /// The values of one attribute an index probe takes: between optional bounds, and null too when `nulls` is set.
    /// With neither bound the range holds every value (`due != nil`).
    struct Range {
        var lower: Value?
        var lowerInclusive = true
        var upper: Value?
        var upperInclusive = true
        /// Whether nulls are in as well (`(due ?? distantPast) < cutoff`); no ordering alone matches a null.
        var nulls = false

        /// The values in both: the tighter bound on each side (the exclusive one on a tie), nulls only if both have
        /// them.
        func intersected(with other: Range) -> Range {
            var r = self
            if let l = other.lower {
                let c = r.lower.map { Value.compare(l, $0) } ?? 1
                if c > 0 || (c == 0 && !other.lowerInclusive) {
                    (r.lower, r.lowerInclusive) = (l, other.lowerInclusive)
                }
            }
            if let u = other.upper {
                let c = r.upper.map { Value.compare(u, $0) } ?? -1
                if c < 0 || (c == 0 && !other.upperInclusive) {
                    (r.upper, r.upperInclusive) = (u, other.upperInclusive)
                }
            }
            r.nulls = nulls && other.nulls
            return r
        }
    }

    /// The related objects a to-one path condition selects, for an access that follows their inverse relationship
    /// back to the fetched entity.
    final class Path {
        /// The to-one relationship of the fetched entity.
        let relationship: Int
        let target: UInt32
        /// The inverse relationship, in the target entity.
        let inverse: RelationshipKey
        /// How the related objects are found (by their own plan).
        let access: Access
        /// The related objects of the base snapshot that pass every condition on them.
        let related: [ObjectID]

        init(relationship: Int, target: UInt32, inverse: RelationshipKey, access: Access, related: [ObjectID]) {
            self.relationship = relationship
            self.target = target
            self.inverse = inverse
            self.access = access
            self.related = related
        }
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
        /// What reaching the candidates costs, in objects visited: the candidates, plus for a path the related
        /// objects found first.
        var cost = 0
        /// Whether the access yields exactly the predicate's matches (every term is an index bound).
        var exact = false
        var bounds: [String] = []
        /// The predicate in column form, for a column scan.
        var columnPredicate: ColumnPredicate?
        /// For `.throughRelationship`: the related objects and how they were found.
        var path: Path?
    }

    /// An attribute of the object or of an object it reaches by to-one hops.
    private struct Column: Hashable {
        var hops: [Int]
        var attribute: Int
    }

    /// The values of a column a conjunct accepts.
    private enum Condition {
        case equal(Value)
        case among([Value])
        case range(Range)
        /// A collection attribute holding this element (`$0.tags.contains("x")`), which an element index answers.
        case contains(Value)
        /// A dictionary attribute holding this key with this value (`$0.metadata["color"] == "red"`), or with any
        /// value when it is nil (`$0.metadata["color"] != nil`): a prefix of its pairs index.
        case entry(Value, Value?)
        /// A dictionary attribute holding this key with a value in the range (`$0.info["rating", default: .null] >
        /// 3`), which lies within one kind: a range after the key's prefix of its pairs index.
        case entryRange(Value, Range, String)
    }

    private struct Term {
        var column: Column
        var condition: Condition

        /// Whether a null fails the conjunct; on a path, so does a missing related object (its reads are null).
        var rejectsNull: Bool {
            switch condition {
            case .equal(let v): return !v.isNull
            case .among(let vs): return !vs.contains(.null)
            case .range(let r): return !r.nulls
            case .contains, .entry, .entryRange: return true
            }
        }
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

    private func column(_ e: QueryExpression) -> Column? {
        guard case .attribute(0, let hops, let a) = e else { return nil }
        return Column(hops: hops, attribute: a)
    }

    private func description(_ c: Column) -> AttributeDescription {
        var entity = self.entity
        for hop in c.hops { entity = snapshot.schema.layouts[Int(entity)].relationships[hop].target }
        return snapshot.schema.layouts[Int(entity)].attributes[c.attribute]
    }

    private func classify(_ e: QueryExpression) -> Term? {
        switch e {
        case .compare(let op, .constant(let v), let x):
            if case .constant = x { return nil }
            return classify(.compare(op.flipped, x, .constant(v)))
        case .compare(let op, .keyValue(let x, .constant(let key)), .constant(let v)):
            return entryTerm(op, x, key, v)
        case .compare(let op, .coalesce(.keyValue(let x, .constant(let key)), .constant(let f)), .constant(let v)):
            // `$0.info["rating", default: .null] > 3`: a missing key reads as the default, which must fail the test.
            guard !QueryEvaluator.compare(op, f, v) else { return nil }
            return entryTerm(op, x, key, v)
        case .compare(let op, let x, .constant(let v)):
            if let c = column(x) { return term(c, op, v, fallback: nil) }
            // `($0.due ?? fallback) < cutoff`: the range, and the nulls when the fallback passes.
            if case .coalesce(let y, .constant(let f)) = x, !f.isNull, let c = column(y) {
                return term(c, op, v, fallback: f)
            }
            return nil
        case .isIn(let x, let values):
            guard let c = column(x) else { return nil }
            let type = description(c).type
            let normalized = values.compactMap { type.normalized($0) }
            guard normalized.count == values.count else { return nil }
            return Term(column: c, condition: .among(Array(Set(normalized)).sorted()))
        case .attribute(0, let hops, let a):
            let c = Column(hops: hops, attribute: a)
            return description(c).type == .bool ? Term(column: c, condition: .equal(.bool(true))) : nil
        case .coalesce(let x, .constant(.bool(let f))):
            // `$0.project?.archived ?? false`
            guard let c = column(x), description(c).type == .bool else { return nil }
            return Term(column: c, condition: f ? .among([.null, .bool(true)]) : .equal(.bool(true)))
        case .elementContains(let x, .constant(let v)):
            guard let c = column(x), let element = description(c).type.elementType,
                let n = element.normalized(v), !n.isNull
            else { return nil }
            return Term(column: c, condition: .contains(n))
        case .not(.attribute(0, [], let a))
        where layout.attributes[a].type == .bool && !layout.attributes[a].isOptional:
            return Term(column: Column(hops: [], attribute: a), condition: .equal(.bool(false)))
        default:
            return nil
        }
    }

    /// A test of a dictionary key's value (`x[key] op v`) as a prefix or range of the dictionary's pairs index.
    private func entryTerm(_ op: QueryExpression.Comparison, _ x: QueryExpression, _ key: Value, _ v: Value) -> Term? {
        guard let c = column(x), case .string = key else { return nil }
        let type = description(c).type
        guard type.isDictionary else { return nil }
        // What a key's value can be: strings only, or the metadata scalars (a stored null reads as the marker).
        let stored: Value?
        switch v {
        case .string: stored = v
        case .bool, .int, .double: stored = type == .metadataDictionary ? v : nil
        default: stored = type == .metadataDictionary && v == QueryExpression.metadataNull ? .null : nil
        }
        switch op {
        case .equal: return stored.map { Term(column: c, condition: .entry(key, $0)) }
        case .notEqual: return v.isNull ? Term(column: c, condition: .entry(key, nil)) : nil
        default: break
        }
        // An ordering holds only within the value's kind, so the range is bounded by the kind's first and last
        // values in index order (null < bool < numbers < strings): a number lies above `true` and below "".
        guard let stored, !stored.isNull else { return nil }
        var range = Range()
        switch stored {
        case .bool: (range.lower, range.upper) = (.bool(false), .bool(true))
        case .string: range.lower = .string("")
        default:
            (range.lower, range.lowerInclusive) = (.bool(true), false)
            (range.upper, range.upperInclusive) = (.string(""), false)
        }
        let symbol: String
        switch op {
        case .less, .lessOrEqual:
            (range.upper, range.upperInclusive) = (stored, op == .lessOrEqual)
            symbol = op == .less ? "<" : "<="
        default:
            (range.lower, range.lowerInclusive) = (stored, op == .greaterOrEqual)
            symbol = op == .greater ? ">" : ">="
        }
        return Term(column: c, condition: .entryRange(key, range, "\(symbol) \(stored)"))
    }

    /// The values of column `c` for which `c op v` holds, where a null reads as `fallback` (or stays null).
    private func term(_ c: Column, _ op: QueryExpression.Comparison, _ v: Value, fallback: Value?) -> Term? {
        guard let n = description(c).type.normalized(v) else { return nil }
        // What a null row gives, decided as the evaluator decides it.
        let nullPasses = QueryEvaluator.compare(op, fallback ?? .null, v)
        var range = Range()
        range.nulls = nullPasses
        switch op {
        case .equal:
            if n.isNull { return nullPasses ? Term(column: c, condition: .equal(.null)) : nil }
            return Term(column: c, condition: nullPasses ? .among([.null, n]) : .equal(n))
        case .notEqual:
            // Only `x != nil`: the range of every value.
            guard n.isNull, !nullPasses else { return nil }
        case .less, .lessOrEqual:
            guard !n.isNull else { return nil }
            (range.upper, range.upperInclusive) = (n, op == .lessOrEqual)
        case .greater, .greaterOrEqual:
            guard !n.isNull else { return nil }
            (range.lower, range.lowerInclusive) = (n, op == .greaterOrEqual)
        }
        return Term(column: c, condition: .range(range))
    }

    func choose() -> Access {
        let terms = conjuncts.map(classify)
        var equal: [Int: (Value, Int)] = [:]
        var among: [Int: ([Value], Int)] = [:]
        var ranges: [Int: (Range, [Int])] = [:]
        var contains: [Int: [(Value, Int)]] = [:]
        var entries: [Int: [([Value], Int)]] = [:]
        var entryRanges: [Int: [(Value, Range, String, Int)]] = [:]
        for (i, term) in terms.enumerated() {
            guard let term, term.column.hops.isEmpty else { continue }
            let a = term.column.attribute
            switch term.condition {
            case .equal(let v): if equal[a] == nil { equal[a] = (v, i) }
            case .among(let vs): if among[a] == nil { among[a] = (vs, i) }
            case .range(let r):
                let (range, used) = ranges[a] ?? (Range(nulls: true), [])
                ranges[a] = (range.intersected(with: r), used + [i])
            case .contains(let v): contains[a, default: []].append((v, i))
            case .entry(let key, let v): entries[a, default: []].append(([key] + (v.map { [$0] } ?? []), i))
            case .entryRange(let key, let r, let test): entryRanges[a, default: []].append((key, r, test, i))
            }
        }
        let names = layout.attributes.map(\.name)
        var best: Access?
        var ordered: Access?
        for (number, index) in layout.indexes.enumerated() {
            if index.isElements {
                // An element index answers `contains`: the objects holding the element, once each. Of several
                // elements asked for, the rarest one's entries are the candidates.
                let name = names[index.columns[0]]
                var probes: [([Value], Range?, Int, String)] =
                    index.isPairs
                    ? (entries[index.columns[0]] ?? []).map { prefix, i in
                        (
                            prefix, nil, i,
                            "\(name)[\(prefix[0])] " + (prefix.count > 1 ? "= \(prefix[1])" : "!= null")
                        )
                    }
                    : (contains[index.columns[0]] ?? []).map { v, i in ([v], nil, i, "\(name) contains \(v)") }
                if index.isPairs {
                    probes += (entryRanges[index.columns[0]] ?? []).map { key, range, test, i in
                        ([key], range, i, "\(name)[\(key)] \(test)")
                    }
                }
                for (prefix, range, i, bound) in probes {
                    var access = Access(
                        kind: range == nil ? .indexEquality : .indexRange,
                        index: IndexKey(entity: entity, index: number), columns: index.columns)
                    access.prefixes = [prefix]
                    access.range = range
                    access.bounds = [bound]
                    access.candidates = count(access)
                    access.cost = access.candidates
                    access.exact = complete && conjuncts.count == 1 && i == 0
                    if best == nil || access.candidates < best!.candidates { best = access }
                }
                continue
            }
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
                    access.bounds.append(
                        vs.count == 2 && vs[0].isNull
                            ? "\(names[column]) = null or \(names[column]) = \(vs[1])"
                            : "\(names[column]) IN \(vs.count) values")
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
            access.cost = access.candidates
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
        // Through a to-one relationship: only when it costs less than the best index and than a full scan.
        var hops: [Int] = []
        for term in terms {
            if let term, term.rejectsNull, let hop = term.column.hops.first, !hops.contains(hop) { hops.append(hop) }
        }
        for hop in hops {
            if let path = through(hop, budget: min(best?.cost ?? all, all)) { best = path }
        }
        if let ordered {
            let bestCount = best?.cost ?? all
            let visits = window.map { min(ordered.candidates, $0 * ordered.candidates / max(bestCount, 1)) }
            if ordered.candidates <= bestCount || (visits ?? .max) <= bestCount { return ordered }
        }
        if let best, best.cost <= all { return best }
        return Access(candidates: all, cost: all, exact: complete && conjuncts.isEmpty)
    }

    /// An access through the to-one relationship `hop`, when it costs less than `budget`: the related objects are
    /// found by their own plan over the conjuncts that read only through `hop` (one of which fails when there is no
    /// related object), and the candidates are the objects their inverse relationship holds.
    private func through(_ hop: Int, budget: Int) -> Access? {
        let relationship = layout.relationships[hop]
        guard !relationship.isToMany else { return nil }
        let target = relationship.target
        let rerooted = conjuncts.compactMap { $0.rerooted(through: hop) }
        guard let first = rerooted.first else { return nil }
        let planner = QueryPlanner(
            snapshot: snapshot, entity: target, conjuncts: rerooted, complete: true, sort: [], window: nil)
        let access = planner.choose()
        // A scan of the related entity is worth trying only when it is much smaller than this one.
        if access.kind == .fullScan {
            guard access.cost * 4 <= budget else { return nil }
        } else {
            guard access.cost < budget else { return nil }
        }
        var related = access.kind == .fullScan ? snapshot.objectIDs(entity: target) : Self.scan(snapshot, access)
        if !access.exact {
            var evaluator = QueryEvaluator(view: ContextView(base: snapshot, layers: []))
            let test = rerooted.dropFirst().reduce(first) { .and($0, $1) }
            related = related.filter { evaluator.test(test, SnapshotRow(graph: snapshot, id: $0)) }
        }
        let inverse = RelationshipKey(entity: target, index: relationship.inverse)
        let candidates = related.reduce(0) { $0 + snapshot.targetCount($1, inverse) }
        let cost = access.cost + candidates
        guard cost < budget else { return nil }
        return Access(
            kind: .throughRelationship, candidates: candidates, cost: cost,
            path: Path(relationship: hop, target: target, inverse: inverse, access: access, related: related))
    }

    private func describe(_ range: Range, _ name: String) -> String {
        var parts: [String] = []
        if let lower = range.lower { parts.append("\(name) \(range.lowerInclusive ? ">=" : ">") \(lower)") }
        if let upper = range.upper { parts.append("\(name) \(range.upperInclusive ? "<=" : "<") \(upper)") }
        if parts.isEmpty { return range.nulls ? "\(name): any value or null" : "\(name) != null" }
        let bounds = parts.joined(separator: ", ")
        guard range.nulls else { return bounds }
        return "\(name) = null or " + (parts.count > 1 ? "(\(bounds))" : bounds)
    }

    /// One probe of an index: entries between two bounds on a prefix of its values.
    struct Segment {
        var lower: [Value]?
        var lowerInclusive: Bool
        var upper: [Value]?
        var upperInclusive: Bool
    }

    /// The probes for one prefix, in index order: the nulls (when the range takes them and they are not next to
    /// it), then the range. A range open at the bottom starts above the nulls unless it takes them.
    static func segments(_ prefix: [Value], _ range: Range?) -> [Segment] {
        let whole: [Value]? = prefix.isEmpty ? nil : prefix
        guard let range else {
            return [Segment(lower: whole, lowerInclusive: true, upper: whole, upperInclusive: true)]
        }
        var out: [Segment] = []
        var lower = Segment(lower: prefix + [.null], lowerInclusive: range.nulls, upper: whole, upperInclusive: true)
        if let l = range.lower {
            if range.nulls {
                out.append(
                    Segment(
                        lower: prefix + [.null], lowerInclusive: true, upper: prefix + [.null], upperInclusive: true)
                )
            }
            (lower.lower, lower.lowerInclusive) = (prefix + [l], range.lowerInclusive)
        }
        if let u = range.upper { (lower.upper, lower.upperInclusive) = (prefix + [u], range.upperInclusive) }
        return out + [lower]
    }

    func count(_ access: Access) -> Int {
        guard let index = access.index else { return snapshot.count(entity: entity) }
        return access.prefixes.reduce(0) { total, prefix in
            Self.segments(prefix, access.range).reduce(total) { total, s in
                total
                    + snapshot.count(
                        index, from: s.lower, inclusive: s.lowerInclusive, to: s.upper, inclusive: s.upperInclusive)
            }
        }
    }

    /// The candidate IDs of an index access, prefix by prefix (each prefix in index order), or of an access through
    /// a relationship (in ID order). `touched` gives the objects with pending changes per entity: for a path, the
    /// objects pointing at a related object with pending changes are candidates too, since the fetch evaluates
    /// them over the context's view.
    static func scan(
        _ snapshot: Graph, _ access: Access, limit: Int = .max, touched: (UInt32) -> Set<ObjectID> = { _ in [] }
    ) -> [ObjectID] {
        if let path = access.path {
            var related = Set(path.related)
            related.formUnion(affected(snapshot, path, touched))
            var out = Set<ObjectID>()
            for id in related { out.formUnion(snapshot.targets(id, path.inverse).filter(snapshot.contains)) }
            return Array(out.sorted().prefix(limit))
        }
        guard let index = access.index else { return [] }
        var out: [ObjectID] = []
        let prefixes = access.reverse ? access.prefixes.reversed() : access.prefixes
        for prefix in prefixes {
            let segments = segments(prefix, access.range)
            for s in access.reverse ? segments.reversed() : segments {
                out += snapshot.scan(
                    index, from: s.lower, inclusive: s.lowerInclusive, to: s.upper, inclusive: s.upperInclusive,
                    reverse: access.reverse, limit: limit - out.count)
                if out.count >= limit { return out }
            }
        }
        return out
    }

    /// The related objects of the base snapshot whose pending changes (or those of objects further along the path)
    /// may change what the objects pointing at them match.
    private static func affected(
        _ snapshot: Graph, _ path: Path, _ touched: (UInt32) -> Set<ObjectID>
    ) -> Set<ObjectID> {
        var out = touched(path.target).filter(snapshot.contains)
        if let next = path.access.path {
            for id in affected(snapshot, next, touched) {
                out.formUnion(snapshot.targets(id, next.inverse).filter(snapshot.contains))
            }
        }
        return out
    }
}

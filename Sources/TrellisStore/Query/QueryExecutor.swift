import TrellisCore
import TrellisGraph
import TrellisJournal

/// Runs one fetch over a context's view: base-snapshot candidates from the planner's access path (skipping objects
/// with pending changes), plus the pending objects evaluated over the view; then sort, offset and limit over the
/// merge. So pending inserts and updates are found and sorted like stored ones, and pending deletes are never seen.
struct QueryExecutor {
    let view: ContextView
    let entity: UInt32
    /// The compiled predicate; nil selects every object.
    let predicate: QueryExpression?
    /// Set when the predicate is beyond the compiler: Foundation evaluates it on the object.
    let objectTest: ((ObjectID) -> Bool)?
    let sort: [SortKey]
    /// Set when a sort key is beyond the compiler: Foundation orders the objects.
    let objectOrder: ((ObjectID, ObjectID) -> Bool)?
    let offset: Int
    let limit: Int?

    private var window: Int? { limit.map { offset + $0 } }

    func plan() -> QueryPlanner.Access {
        let whole = predicate?.conjuncts ?? []
        let plannable = whole.filter { !$0.isOpaque }
        let access = QueryPlanner(
            snapshot: view.base, entity: entity, conjuncts: plannable,
            complete: objectTest == nil && plannable.count == whole.count, sort: objectOrder == nil ? sort : [],
            window: window
        ).choose()
        return columnScan(instead: access) ?? access
    }

    /// A column scan in place of the planner's choice, when the predicate has a column form and the choice is a full
    /// scan or an index that narrows little. An index is kept when it expresses the whole predicate (a count is then
    /// O(log n)), walks the sort order, or leaves under a quarter of the objects. A column pass costs a few nanoseconds
    /// per object and comparison, an index candidate a lookup and a row evaluation, far more; the quarter is a
    /// conservative crossover that keeps selective index plans (and what `explain` shows for them) as they were.
    private func columnScan(instead access: QueryPlanner.Access) -> QueryPlanner.Access? {
        guard objectTest == nil, let predicate else { return nil }
        let all = view.base.count(entity: entity)
        switch access.kind {
        case .fullScan, .columnScan: break
        case .orderedIndexScan, .uniqueLookup, .throughRelationship: return nil
        case .indexEquality, .indexIn, .indexRange:
            guard !access.exact, access.candidates * 4 >= all else { return nil }
        }
        guard let columns = ColumnPredicate(predicate, layout: view.schema.layouts[Int(entity)]) else { return nil }
        return QueryPlanner.Access(kind: .columnScan, candidates: all, columnPredicate: columns)
    }

    /// The rows of `ids` grouped by leaf key, as masks a column scan leaves out of the base snapshot's matches.
    private static func leafMasks(_ ids: Set<ObjectID>) -> [UInt64: UInt64] {
        var out: [UInt64: UInt64] = [:]
        for id in ids { out[id.serial >> Leaf.shift, default: 0] |= 1 << (id.serial & Leaf.mask) }
        return out
    }

    /// A match with its sort key values, read while the row was at hand.
    struct Match {
        var id: ObjectID
        var first: Value
        var rest: [Value]
    }

    /// A match read straight from its leaf: sort key values only, without making a row.
    private func match(_ id: ObjectID, _ leaf: Leaf, _ r: Int) -> Match {
        guard let key = sort.first else { return Match(id: id, first: .null, rest: []) }
        return Match(
            id: id, first: leaf.columns[key.attribute].value(r),
            rest: sort.count > 1 ? sort.dropFirst().map { leaf.columns[$0.attribute].value(r) } : [])
    }

    private func match(_ row: some QueryRow) -> Match {
        guard let key = sort.first else { return Match(id: row.id, first: .null, rest: []) }
        return Match(
            id: row.id, first: row.attribute(key.attribute),
            rest: sort.count > 1 ? sort.dropFirst().map { row.attribute($0.attribute) } : [])
    }

    /// The matching objects in fetch order, after offset and limit.
    /// - Complexity: O(c + p + m log w) for c candidates, p pending objects, m matches and a window of w (with a
    ///   limit and an ordered index walk, only about `offset + limit` candidates are visited).
    func identifiers() -> [ObjectID] {
        var evaluator = QueryEvaluator(view: view)
        let touched = view.touched(entity: entity)
        var matches: [Match] = []
        for id in touched where view.exists(id) {
            let row = ViewRow(view: view, id: id)
            if let objectTest {
                if !objectTest(id) { continue }
            } else if let predicate, !evaluator.test(predicate, row) {
                continue
            }
            matches.append(match(row))
        }
        let access = plan()
        func matchesBase(_ row: some QueryRow) -> Bool {
            guard touched.isEmpty || !touched.contains(row.id) else { return false }
            if let objectTest { return objectTest(row.id) }
            return predicate.map { evaluator.test($0, row) } ?? true
        }
        let unordered = sort.isEmpty && objectOrder == nil
        switch access.kind {
        case .fullScan:
            var found = 0
            for row in view.base.rows(entity: entity) where matchesBase(row) {
                matches.append(match(row))
                found += 1
                // Rows come in ID order: with no sort, the first `window` base matches are all that can survive.
                if unordered, let window, found >= window { break }
            }
        case .columnScan:
            var found = 0
            let entity = entity
            view.base.forEachMatchingLeaf(
                entity: entity, where: access.columnPredicate!, excluding: Self.leafMasks(touched)
            ) { key, leaf, rows in
                var rest = rows
                while rest != 0 {
                    let r = rest.trailingZeroBitCount
                    rest &= rest &- 1
                    matches.append(match(ObjectID(entity: entity, serial: key << Leaf.shift | UInt64(r)), leaf, r))
                    found += 1
                    // As in a full scan: leaves come in ID order, so with no sort the first `window` matches do.
                    if unordered, let window, found >= window { return false }
                }
                return true
            }
        case .orderedIndexScan where objectOrder == nil:
            matches += orderedBaseMatches(access, matchesBase)
        default:
            for id in QueryPlanner.scan(view.base, access, touched: view.touched(entity:)) {
                let row = SnapshotRow(graph: view.base, id: id)
                if matchesBase(row) { matches.append(match(row)) }
            }
        }
        return window(order(matches))
    }

    /// Walks an index in sort order until `offset + limit` matches are found and the run of equal first keys ends.
    private func orderedBaseMatches(_ access: QueryPlanner.Access, _ accept: (SnapshotRow) -> Bool) -> [Match] {
        var out: [Match] = []
        var boundary: Value?
        var batch = max(64, (window ?? .max / 2) * 2)
        var visited = 0
        while true {
            let ids = QueryPlanner.scan(view.base, access, limit: visited + batch)
            for id in ids.dropFirst(visited) {
                let row = SnapshotRow(graph: view.base, id: id)
                let m = match(row)
                if let boundary, m.first != boundary { return out }
                if accept(row) {
                    out.append(m)
                    if let window, out.count >= window, boundary == nil { boundary = m.first }
                }
            }
            if ids.count < visited + batch { return out }
            visited = ids.count
            batch *= 2
        }
    }

    private func precedes(_ x: Match, _ y: Match) -> Bool {
        let c = sort[0].compare(x.first, y.first)
        if c != 0 { return c < 0 }
        for (i, key) in sort.dropFirst().enumerated() {
            let c = key.compare(x.rest[i], y.rest[i])
            if c != 0 { return c < 0 }
        }
        return x.id < y.id
    }

    private func order(_ matches: [Match]) -> [ObjectID] {
        if let objectOrder {
            return matches.map(\.id).sorted { a, b in objectOrder(a, b) || (!objectOrder(b, a) && a < b) }
        }
        guard !sort.isEmpty else { return matches.map(\.id).sorted() }
        guard let window, window * 4 < matches.count else {
            if sort.count == 1 && sort[0].comparator == nil {
                // The common case, kept free of per-comparison indirection.
                let ascending = sort[0].ascending
                return matches.sorted { x, y in
                    let c = Value.compare(x.first, y.first)
                    return c != 0 ? (c < 0) == ascending : x.id < y.id
                }.map(\.id)
            }
            return matches.sorted(by: precedes).map(\.id)
        }
        // A small window of many matches: keep the best `window` in order instead of sorting everything.
        var best: [Match] = []
        best.reserveCapacity(window + 1)
        for m in matches where best.count < window || precedes(m, best[best.count - 1]) {
            var lo = 0
            var hi = best.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if precedes(best[mid], m) { lo = mid + 1 } else { hi = mid }
            }
            best.insert(m, at: lo)
            if best.count > window { best.removeLast() }
        }
        return best.map(\.id)
    }

    private func window(_ ids: [ObjectID]) -> [ObjectID] {
        let start = min(offset, ids.count)
        let end = limit.map { min(ids.count, start + $0) } ?? ids.count
        return Array(ids[start..<end])
    }

    /// The number of matches after offset and limit; index bounds that express the whole predicate are counted in
    /// O(log n) per probe, a predicate with a column form by masks over leaves in O(n / 64 × comparisons), both
    /// corrected for the pending objects.
    func count() -> Int {
        let access = plan()
        let total: Int
        if let columns = access.columnPredicate {
            // Masks count the base snapshot's matches without making IDs; the pending objects are evaluated over the
            // view, as a fetch does.
            let touched = view.touched(entity: entity)
            var n = view.base.countRows(entity: entity, where: columns, excluding: Self.leafMasks(touched))
            var evaluator = QueryEvaluator(view: view)
            for id in touched where view.exists(id) {
                if predicate.map({ evaluator.test($0, ViewRow(view: view, id: id)) }) ?? true { n += 1 }
            }
            total = n
        } else if access.exact && objectTest == nil {
            var evaluator = QueryEvaluator(view: view)
            var n = access.candidates
            for id in view.touched(entity: entity) {
                if view.base.contains(id),
                    predicate.map({ evaluator.test($0, SnapshotRow(graph: view.base, id: id)) }) ?? true
                {
                    n -= 1
                }
                if view.exists(id), predicate.map({ evaluator.test($0, ViewRow(view: view, id: id)) }) ?? true {
                    n += 1
                }
            }
            total = n
        } else {
            total =
                QueryExecutor(
                    view: view, entity: entity, predicate: predicate, objectTest: objectTest, sort: [],
                    objectOrder: nil,
                    offset: 0, limit: nil
                ).identifiers().count
        }
        let afterOffset = max(0, total - offset)
        return limit.map { min($0, afterOffset) } ?? afterOffset
    }
}

extension QueryExecutor {
    /// The plan as `explain` reports it.
    func explain(pending: Int) -> QueryPlan {
        Self.describe(
            plan(), entity, view.schema, evaluatesOnObjects: objectTest != nil || objectOrder != nil,
            pending: pending)
    }

    private static func describe(
        _ access: QueryPlanner.Access, _ entity: UInt32, _ schema: Schema, evaluatesOnObjects: Bool, pending: Int
    ) -> QueryPlan {
        let layout = schema.layouts[Int(entity)]
        let path = access.path
        return QueryPlan(
            entity: layout.name, access: access.kind,
            index: access.index.map { _ in access.columns.map { layout.attributes[$0].name } }, bounds: access.bounds,
            candidates: access.candidates, filters: !access.exact, evaluatesOnObjects: evaluatesOnObjects,
            sortedByIndex: access.kind == .orderedIndexScan, pendingObjects: pending,
            relationship: path.map { layout.relationships[$0.relationship].name },
            inverse: path.map { schema.layouts[Int($0.target)].relationships[$0.inverse.index].name },
            related: path.map {
                describe($0.access, $0.target, schema, evaluatesOnObjects: false, pending: 0)
            })
    }
}

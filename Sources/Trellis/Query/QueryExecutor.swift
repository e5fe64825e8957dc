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
        return QueryPlanner(
            snapshot: view.base, entity: entity, conjuncts: plannable,
            complete: objectTest == nil && plannable.count == whole.count, sort: objectOrder == nil ? sort : [],
            window: window
        ).choose()
    }

    /// The matching objects in fetch order, after offset and limit.
    /// - Complexity: O(c + p + m log m) for c candidates, p pending objects and m matches (with a limit and an
    ///   ordered index walk, only about `offset + limit` candidates are visited).
    func identifiers() -> [ObjectID] {
        var evaluator = QueryEvaluator(view: view)
        let touched = view.touched(entity: entity)
        var matches = Array(touched).filter { id in
            guard view.exists(id) else { return false }
            if let objectTest { return objectTest(id) }
            return predicate.map { evaluator.test($0, ViewRow(view: view, id: id)) } ?? true
        }
        let access = plan()
        func matchesBase(_ row: some QueryRow) -> Bool {
            guard !touched.contains(row.id) else { return false }
            if let objectTest { return objectTest(row.id) }
            return predicate.map { evaluator.test($0, row) } ?? true
        }
        let unordered = sort.isEmpty && objectOrder == nil
        switch access.kind {
        case .fullScan:
            var found = 0
            for row in view.base.rows(entity: entity) where matchesBase(row) {
                matches.append(row.id)
                found += 1
                // Rows come in ID order: with no sort, the first `window` base matches are all that can survive.
                if unordered, let window, found >= window { break }
            }
        case .orderedIndexScan where objectOrder == nil:
            matches += orderedBaseMatches(access, matchesBase)
        default:
            for id in QueryPlanner.scan(view.base, access) where matchesBase(SnapshotRow(graph: view.base, id: id)) {
                matches.append(id)
            }
        }
        return window(order(matches))
    }

    /// Walks an index in sort order until `offset + limit` matches are found and the run of equal first keys ends.
    private func orderedBaseMatches(_ access: QueryPlanner.Access, _ accept: (SnapshotRow) -> Bool) -> [ObjectID] {
        var out: [ObjectID] = []
        var boundary: Value?
        let key = sort[0]
        var batch = max(64, (window ?? .max / 2) * 2)
        var visited = 0
        while true {
            let ids = QueryPlanner.scan(view.base, access, limit: visited + batch)
            for id in ids.dropFirst(visited) {
                let row = SnapshotRow(graph: view.base, id: id)
                if let boundary, row.attribute(key.attribute) != boundary { return out }
                if accept(row) {
                    out.append(id)
                    if let window, out.count >= window, boundary == nil { boundary = row.attribute(key.attribute) }
                }
            }
            if ids.count < visited + batch { return out }
            visited = ids.count
            batch *= 2
        }
    }

    private func order(_ ids: [ObjectID]) -> [ObjectID] {
        if let objectOrder {
            return ids.sorted { a, b in objectOrder(a, b) || (!objectOrder(b, a) && a < b) }
        }
        guard !sort.isEmpty else { return ids.sorted() }
        var rows = ids.map { id in (id: id, keys: sort.map { view.value(id, $0.attribute) ?? .null }) }
        SortKey.sort(&rows, by: sort)
        return rows.map(\.id)
    }

    private func window(_ ids: [ObjectID]) -> [ObjectID] {
        let start = min(offset, ids.count)
        let end = limit.map { min(ids.count, start + $0) } ?? ids.count
        return Array(ids[start..<end])
    }

    /// The number of matches after offset and limit; index bounds that express the whole predicate are counted in
    /// O(log n) per probe, corrected for the pending objects.
    func count() -> Int {
        let access = plan()
        let total: Int
        if access.exact && objectTest == nil {
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

/// An object of the base snapshot, read attribute by attribute.
struct SnapshotRow: QueryRow {
    let graph: Graph
    let id: ObjectID

    func attribute(_ index: Int) -> Value {
        graph.value(id, AttributeKey(entity: id.entity, index: index)) ?? .null
    }
}

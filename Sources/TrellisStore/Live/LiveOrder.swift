import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// How a live result orders its rows: the section attribute first (when sectioned), then the sort keys, then the
/// `ObjectID`, so that the order is total and the same as a fetch's.
final class LiveOrdering: Sendable {
    /// The entity of the rows.
    let entity: UInt32
    /// The attributes whose values make a row's key, in order (the section attribute first when sectioned).
    let keys: [SortKey]
    /// Whether `keys[0]` is the section attribute.
    let sectioned: Bool
    /// The compiled predicate (nil: every object of the entity); it reads only the row's own attributes.
    let predicate: SendablePredicate?

    init(entity: UInt32, keys: [SortKey], sectioned: Bool, predicate: SendablePredicate?) {
        self.entity = entity
        self.keys = keys
        self.sectioned = sectioned
        self.predicate = predicate
    }

    /// Three-way comparison of two keys; a bound sorts before every key that shares its values.
    func compare(_ a: LiveKey, _ b: LiveKey) -> Int {
        for i in 0..<min(a.values.count, b.values.count) {
            let c = keys[i].compare(a.values[i], b.values[i])
            if c != 0 { return c }
        }
        if a.isBound != b.isBound { return a.isBound ? -1 : 1 }
        if a.isBound { return 0 }
        return a.id < b.id ? -1 : (a.id == b.id ? 0 : 1)
    }

    /// The key of `id` in `graph`, or nil when the object does not exist there or the predicate rejects it.
    func key(of id: ObjectID, in graph: Graph) -> LiveKey? {
        guard graph.contains(id) else { return nil }
        let row = SnapshotRow(graph: graph, id: id)
        if let predicate {
            var evaluator = QueryEvaluator(view: ContextView(base: graph, layers: []))
            guard evaluator.test(predicate.expression, row) else { return nil }
        }
        return LiveKey(values: keys.map { row.attribute($0.attribute) }, id: id, isBound: false, ordering: self)
    }
}

/// A compiled predicate, immutable once made, that a store's observer evaluates off the context's actor.
struct SendablePredicate: @unchecked Sendable {
    let expression: QueryExpression
}

/// A row's place in a live result: its key values and ID, compared by the result's ordering.
struct LiveKey: Comparable, Sendable {
    let values: [Value]
    let id: ObjectID
    /// A bound: below every row whose leading values equal `values` (the start of a section).
    let isBound: Bool
    let ordering: LiveOrdering

    static func < (a: LiveKey, b: LiveKey) -> Bool { a.ordering.compare(a, b) < 0 }
    static func == (a: LiveKey, b: LiveKey) -> Bool { a.ordering.compare(a, b) == 0 }

    /// Whether both keys hold identical values (the row did not move for them).
    func sameValues(as other: LiveKey) -> Bool {
        values.count == other.values.count && zip(values, other.values).allSatisfy { $0.isIdentical(to: $1) }
    }
}

/// A section of a live result, ordered by its value.
struct SectionKey: Comparable, Sendable {
    let value: Value
    let ordering: LiveOrdering

    static func < (a: SectionKey, b: SectionKey) -> Bool { a.ordering.keys[0].compare(a.value, b.value) < 0 }
    static func == (a: SectionKey, b: SectionKey) -> Bool { a.ordering.keys[0].compare(a.value, b.value) == 0 }
}

/// One version of a live result: persistent trees, so keeping an older one to diff against costs nothing.
struct LiveState: Sendable {
    /// The version the rows are those of.
    var graph: Graph
    /// Every row, in order; the trees count their subtrees, so a row's position is O(log n).
    var order: SortedTree<LiveKey, Bool>
    /// The row count of each non-empty section (sectioned results only).
    var sections: SortedTree<SectionKey, Int>

    /// The section and row of `key`.
    /// - Complexity: O(log n).
    func path(of key: LiveKey) -> ResultsIndexPath {
        guard key.ordering.sectioned else { return ResultsIndexPath(section: 0, row: order.rank(of: key)) }
        let section = SectionKey(value: key.values[0], ordering: key.ordering)
        let start = LiveKey(values: [key.values[0]], id: key.id, isBound: true, ordering: key.ordering)
        return ResultsIndexPath(section: sections.rank(of: section), row: order.rank(of: key) - order.rank(of: start))
    }

    mutating func insert(_ key: LiveKey) {
        _ = order.updateValue(true, forKey: key)
        guard key.ordering.sectioned else { return }
        let section = SectionKey(value: key.values[0], ordering: key.ordering)
        _ = sections.updateValue((sections[section] ?? 0) + 1, forKey: section)
    }

    mutating func remove(_ key: LiveKey) {
        _ = order.removeValue(forKey: key)
        guard key.ordering.sectioned else { return }
        let section = SectionKey(value: key.values[0], ordering: key.ordering)
        let left = (sections[section] ?? 1) - 1
        if left == 0 {
            _ = sections.removeValue(forKey: section)
        } else {
            _ = sections.updateValue(left, forKey: section)
        }
    }
}

/// Keeps a live result's order up to date from each commit's change set, off the actor the result belongs to, and
/// collects what changed until the result takes it.
final class LiveOrderEngine: Sendable {
    struct Contents: Sendable {
        var state: LiveState
        /// The state the result shows (the last one it took).
        var delivered: LiveState
        /// The objects changed since the result last took its changes, with the properties that changed.
        var changed: [ObjectID: Set<String>] = [:]
        var sequences: [UInt64] = []
        /// The changes from `delivered` to `state`, computed here rather than on the result's actor.
        var pending: ResultsChanges?
        /// Rows the maintenance has read (tested against the predicate and keyed), for tests of its cost.
        var reads = 0
    }

    let ordering: LiveOrdering
    let contents: Mutex<Contents>

    init(ordering: LiveOrdering, initial: LiveState) {
        self.ordering = ordering
        contents = Mutex(Contents(state: initial, delivered: initial))
    }

    /// The rows of `graph` in order: the start of a live result (a full read, once).
    static func initialState(_ ordering: LiveOrdering, _ graph: Graph) -> LiveState {
        var state = LiveState(graph: graph, order: SortedTree(), sections: SortedTree())
        for row in graph.rows(entity: ordering.entity) {
            if let key = ordering.key(of: row.id, in: graph) { state.insert(key) }
        }
        return state
    }

    /// Moves the order to `commit`'s version: each object of the entity the commit touched is keyed in the old
    /// version and the new one, and moved in the trees when its key changed. Returns whether anything in the result
    /// changed (so that a delivery is worth scheduling).
    /// - Complexity: O(c log n) for c objects of the entity changed; the other rows are not read.
    @discardableResult
    func apply(_ commit: Commit) -> Bool {
        let report = ContextChanges(commit.changes, schema: commit.snapshot.schema, sequence: commit.sequence)
        return contents.locked { c -> Bool in
            guard commit.sequence > c.state.graph.sequence else { return false }
            if commit.baseSequence != c.state.graph.sequence {
                // Commits made before the result subscribed and after its first read: read everything again, and
                // compare each row kept to find the properties that changed.
                let fresh = Self.initialState(ordering, commit.snapshot)
                let (old, new) = (c.state.graph, commit.snapshot)
                for state in [c.state, fresh] {
                    state.order.forEach { key, _ in
                        c.changed[key.id, default: []].formUnion(Self.changedProperties(key.id, from: old, to: new))
                    }
                }
                c.reads += fresh.order.count
                c.state = fresh
                c.sequences.append(commit.sequence)
                c.pending = ResultsChanges(
                    from: c.delivered, to: c.state, changed: c.changed, ordering: ordering, sequences: c.sequences)
                return true
            }
            var touched = false
            func visit(_ id: ObjectID, _ names: Set<String>) {
                guard id.entity == ordering.entity else { return }
                let old = ordering.key(of: id, in: c.state.graph)
                let new = ordering.key(of: id, in: commit.snapshot)
                c.reads += 2
                guard old != nil || new != nil else { return }
                touched = true
                c.changed[id, default: []].formUnion(names)
                if let old, let new, old.sameValues(as: new) { return }
                if let old { c.state.remove(old) }
                if let new { c.state.insert(new) }
            }
            for id in report.inserted { visit(id, []) }
            for (id, names) in report.updated { visit(id, names) }
            for id in report.deleted { visit(id, []) }
            c.state.graph = commit.snapshot
            guard touched else { return false }
            c.sequences.append(commit.sequence)
            c.reads += 2 * c.changed.count
            c.pending = ResultsChanges(
                from: c.delivered, to: c.state, changed: c.changed, ordering: ordering, sequences: c.sequences)
            return true
        }
    }

    /// The names of the attributes and relationships of `id` that differ between two versions holding it (none when
    /// either lacks it: an insert or a delete).
    /// - Complexity: O(a + t) for a attributes and t targets.
    static func changedProperties(_ id: ObjectID, from old: Graph, to new: Graph) -> Set<String> {
        guard let before = old.object(id), let after = new.object(id) else { return [] }
        let layout = new.schema.layouts[Int(id.entity)]
        var names: Set<String> = []
        for (a, attribute) in layout.attributes.enumerated()
        where !before.value(at: a).isIdentical(to: after.value(at: a)) {
            names.insert(attribute.name)
        }
        for (k, relationship) in layout.relationships.enumerated() {
            let key = RelationshipKey(entity: id.entity, index: k)
            if before.targetSerials(key) != after.targetSerials(key) { names.insert(relationship.name) }
        }
        return names
    }

    /// Takes the newest state and the changes from the state taken last; nil changes when there are none.
    func take() -> (state: LiveState, changes: ResultsChanges?) {
        contents.locked { c in
            defer {
                c.delivered = c.state
                c.changed = [:]
                c.sequences = []
                c.pending = nil
            }
            return (c.state, c.pending)
        }
    }

    var reads: Int { contents.locked { $0.reads } }
}

extension ResultsChanges {
    /// The changes from `old` to `new` for the objects that changed between them (every other row kept its
    /// relative order), in the order a table view applies them.
    /// - Complexity: O(c log n) for c changed objects.
    init(
        from old: LiveState, to new: LiveState, changed: [ObjectID: Set<String>], ordering: LiveOrdering,
        sequences: [UInt64]
    ) {
        self.init()
        self.sequences = sequences
        // Each changed object keyed once in each version, for the sections and the rows.
        let keyed = changed.map { id, names in
            (ordering.key(of: id, in: old.graph), ordering.key(of: id, in: new.graph), names)
        }
        var insertedSections: Set<Int> = []
        var deletedSections: Set<Int> = []
        if ordering.sectioned {
            let touched = keyed.flatMap { [$0.0, $0.1] }.compactMap { $0 }
            for section in touched.map({ SectionKey(value: $0.values[0], ordering: ordering) }) {
                let before = old.sections[section] ?? 0
                let after = new.sections[section] ?? 0
                if before == 0 && after > 0 { insertedSections.insert(new.sections.rank(of: section)) }
                if before > 0 && after == 0 { deletedSections.insert(old.sections.rank(of: section)) }
            }
        }
        for (before, after, names) in keyed {
            switch (before, after) {
            case (nil, nil): continue
            case (nil, let after?): insertedRows.append(new.path(of: after))
            case (let before?, nil): deletedRows.append(old.path(of: before))
            case (let before?, let after?):
                let (from, to) = (old.path(of: before), new.path(of: after))
                if before.sameValues(as: after) {
                    guard !names.isEmpty else { continue }
                    updatedRows.append(Update(from: from, to: to, properties: names))
                } else if deletedSections.contains(from.section) || insertedSections.contains(to.section) {
                    deletedRows.append(from)
                    insertedRows.append(to)
                } else {
                    movedRows.append(Move(from: from, to: to, properties: names))
                }
            }
        }
        self.deletedSections = deletedSections.sorted(by: >)
        self.insertedSections = insertedSections.sorted()
        deletedRows.sort(by: >)
        insertedRows.sort()
        movedRows.sort { $0.to < $1.to }
        updatedRows.sort { $0.to < $1.to }
    }
}

import Observation
import TrellisCore
import TrellisGraph
import TrellisJournal

/// The results of a fetch that keep themselves up to date: optional sections by an attribute, and after every commit
/// that changes them, the inserts, deletes, moves and updates by index path, as Core Data's
/// `NSFetchedResultsController` reports them.
///
/// ```swift
/// let live = try FetchedResultsController(
///     FetchDescriptor<Chore>(sortBy: [SortDescriptor(\.due)]), sectionBy: \.area, context: store.viewContext)
/// print(live.sections.map(\.name), live.count)
/// let token = live.onChange { changes in
///     print(changes.insertedRows, changes.movedRows.map(\.to))   // apply to a table view
/// }
/// ```
///
/// It follows every commit of the store (a save of any context, a batch operation) on the main actor, through the
/// store's `viewContext`. Each commit's change set is applied to the result off the main actor, on the committing
/// thread: every object of the entity the commit changed is tested against the predicate and placed by its sort
/// values in a persistent tree that counts its subtrees, so a commit costs O(c log n) for c changed objects, whatever
/// the result's size, and the other rows are never read. The result holds object IDs and positions; objects are made
/// through the view context when read.
///
/// The predicate must read only the fetched objects' own attributes, and the sorts and the section must name
/// attributes (`init` throws otherwise: a condition through a relationship would make a change to another object
/// move rows, which this maintenance does not follow). `fetchLimit` and `fetchOffset` are not supported. The result
/// shows saved data: unsaved changes of the view context appear once saved.
@MainActor
public final class FetchedResultsController<T: Model>: Observable {
    /// The context objects are made in: the store's view context.
    public let context: ModelContext
    private let engine: LiveOrderEngine
    private var state: LiveState
    private var subscription: ObservationToken?
    private var handlers: [(flag: CancelFlag, handler: (ResultsChanges) -> Void)] = []
    private var streams: [(flag: CancelFlag, continuation: AsyncStream<ResultsChanges>.Continuation)] = []
    private let registrar = ObservationRegistrar()
    /// Counts deliveries; what observers of the result register on.
    private var revision = 0

    /// A live result of `descriptor`, sectioned by the attribute `sectionBy` names (nil: one section), on the store's
    /// view context. The sections are ordered by their value, in the direction of the first sort when it sorts by
    /// the same attribute, else ascending; rows within a section by the sorts, then by `ObjectID`.
    ///
    /// - Throws: `TrellisError` `.invalidArgument` when the context is not the store's view context, the predicate
    ///   reads anything but the objects' own attributes (a relationship, a computed property), a sort or the section
    ///   names something other than an attribute, or the descriptor has a limit or an offset.
    /// - Complexity: O(n) for the n objects of the entity, once.
    public init(
        _ descriptor: FetchDescriptor<T>, sectionBy: PartialKeyPath<T>? = nil, context: ModelContext
    ) throws {
        guard context === context.store.viewContext else {
            throw TrellisError(
                .invalidArgument, "a FetchedResultsController follows the store through store.viewContext")
        }
        guard descriptor.fetchLimit == nil, descriptor.fetchOffset == nil else {
            throw TrellisError(.invalidArgument, "a FetchedResultsController takes no fetchLimit or fetchOffset")
        }
        let binding = context.binding(for: T.self)
        var keys: [SortKey] = []
        for sort in descriptor.sortBy {
            guard let key = SortKey(sort, binding: binding) else {
                throw TrellisError(
                    .invalidArgument, "a FetchedResultsController sorts by attributes of \(T.self) only")
            }
            keys.append(key)
        }
        if let sectionBy {
            let (_, attribute) = try context.attributeColumn(sectionBy, binding)
            if keys.first?.attribute == attribute {
                keys[0] = SortKey(attribute: attribute, ascending: keys[0].ascending)
            } else {
                keys.insert(SortKey(attribute: attribute, ascending: true), at: 0)
            }
        }
        var predicate: SendablePredicate?
        if let filter = descriptor.predicate {
            let compiler = PredicateCompiler(schema: context.schema) { [unowned context] in context.binding(for: $0) }
            let expression = compiler.compile(filter)
            guard expression.readsOnlyOwnAttributes else {
                throw TrellisError(
                    .invalidArgument,
                    "a FetchedResultsController's predicate may read only attributes of \(T.self) itself "
                        + "(not relationships, related objects or computed properties)")
            }
            predicate = SendablePredicate(expression: expression)
        }
        let ordering = LiveOrdering(
            entity: binding.entity, keys: keys, sectioned: sectionBy != nil, predicate: predicate)
        let initial = LiveOrderEngine.initialState(ordering, context.snapshot)
        self.context = context
        engine = LiveOrderEngine(ordering: ordering, initial: initial)
        state = initial
        let engine = self.engine
        subscription = context.store.observe { [weak self] commit in
            guard engine.apply(commit) else { return }
            Task { @MainActor [weak self] in self?.refresh() }
        }
    }

    // MARK: Reading

    /// The number of rows.
    /// - Complexity: O(1).
    public var count: Int {
        registrar.access(self, keyPath: \.revision)
        return state.order.count
    }

    /// The sections, in order; a result without `sectionBy` has exactly one (also when it is empty).
    /// - Complexity: O(s) for s sections.
    public var sections: [ResultsSection] {
        registrar.access(self, keyPath: \.revision)
        guard engine.ordering.sectioned else { return [ResultsSection(value: .null, range: 0..<state.order.count)] }
        var out: [ResultsSection] = []
        var start = 0
        state.sections.forEach { section, count in
            out.append(ResultsSection(value: section.value, range: start..<(start + count)))
            start += count
        }
        return out
    }

    /// The object at a position of the whole result, made through the view context.
    /// - Complexity: O(log n).
    public subscript(position: Int) -> T {
        context.materialize(objectID(at: position), as: T.self)
    }

    /// The object at a section and row.
    /// - Complexity: O(log n).
    public subscript(path: ResultsIndexPath) -> T {
        context.materialize(objectID(at: path), as: T.self)
    }

    /// The ID of the row at a position of the whole result.
    /// - Complexity: O(log n).
    public func objectID(at position: Int) -> ObjectID {
        registrar.access(self, keyPath: \.revision)
        precondition(position >= 0 && position < state.order.count, "Trellis: row \(position) of \(state.order.count)")
        return state.order.element(atRank: position).key.id
    }

    /// The ID of the row at a section and row.
    /// - Complexity: O(log n).
    public func objectID(at path: ResultsIndexPath) -> ObjectID {
        objectID(at: position(of: path))
    }

    /// The IDs of every row, in order.
    /// - Complexity: O(n).
    public var objectIDs: [ObjectID] {
        registrar.access(self, keyPath: \.revision)
        var out: [ObjectID] = []
        out.reserveCapacity(state.order.count)
        state.order.forEach { key, _ in out.append(key.id) }
        return out
    }

    /// Where an object is, or nil when it is not in the result.
    /// - Complexity: O(log n).
    public func indexPath(of id: ObjectID) -> ResultsIndexPath? {
        registrar.access(self, keyPath: \.revision)
        guard id.entity == engine.ordering.entity, let key = engine.ordering.key(of: id, in: state.graph) else {
            return nil
        }
        return state.path(of: key)
    }

    /// The position in the whole result of a section and row.
    private func position(of path: ResultsIndexPath) -> Int {
        guard engine.ordering.sectioned else { return path.row }
        precondition(path.section >= 0 && path.section < state.sections.count, "Trellis: no section \(path.section)")
        let section = state.sections.element(atRank: path.section).key
        let start = LiveKey(
            values: [section.value], id: ObjectID(entity: 0, serial: 0), isBound: true, ordering: engine.ordering)
        return state.order.rank(of: start) + path.row
    }

    // MARK: Following the store

    /// Calls `handler` on the main actor after each commit that changed the result, with what changed; the result
    /// already shows the new rows when it runs. Keep the token: the calls stop when it is cancelled or released.
    /// - Complexity: O(1).
    public func onChange(_ handler: @escaping (ResultsChanges) -> Void) -> ObservationToken {
        let flag = CancelFlag()
        handlers.append((flag, handler))
        return ObservationToken { flag.cancel() }
    }

    /// The same changes as `onChange(_:)`, as an asynchronous sequence; each call makes a new stream.
    /// - Complexity: O(1).
    public func changes() -> AsyncStream<ResultsChanges> {
        let flag = CancelFlag()
        let (stream, continuation) = AsyncStream<ResultsChanges>.makeStream()
        continuation.onTermination = { _ in flag.cancel() }
        streams.append((flag, continuation))
        return stream
    }

    /// Shows the newest commits the result has taken in now and reports their changes, without waiting for the main
    /// actor's next turn (synchronous code and tests); the result does this by itself after each commit.
    /// - Complexity: O(1) plus the handlers.
    public func refresh() {
        let (newest, changes) = engine.take()
        guard newest.graph.sequence > state.graph.sequence || changes != nil else { return }
        // Objects are read through the view context: bring it at least as far as the rows, so that a row's object
        // exists there and shows the values that placed it.
        if context.snapshot.sequence < newest.graph.sequence { context.refresh() }
        registrar.withMutation(of: self, keyPath: \.revision) {
            state = newest
            revision += 1
        }
        guard let changes, !changes.isEmpty else { return }
        handlers.removeAll { $0.flag.isCancelled }
        streams.removeAll { $0.flag.isCancelled }
        for (_, handler) in handlers { handler(changes) }
        for (_, continuation) in streams { continuation.yield(changes) }
    }

    /// The version of the store the result shows.
    public var sequence: UInt64 { state.graph.sequence }

    /// Rows the maintenance has read (tested against the predicate and keyed) since the result was made, not
    /// counting the first read of every row.
    package var maintenanceReads: Int { engine.reads }

    isolated deinit {
        for (_, continuation) in streams { continuation.finish() }
    }
}

extension QueryExpression {
    /// Whether the expression reads nothing but attributes of the object tested (slot 0, no hops): then a change to
    /// another object cannot change its outcome.
    var readsOnlyOwnAttributes: Bool {
        switch self {
        case .opaque, .object, .targets, .quantified: return false
        case .constant, .list: return true
        case .attribute(let slot, let hops, _): return slot == 0 && hops.isEmpty
        case .count(let e), .not(let e), .negate(let e), .isIn(let e, _): return e.readsOnlyOwnAttributes
        case .compare(_, let a, let b), .and(let a, let b), .or(let a, let b), .coalesce(let a, let b),
            .flatMap(let a, let b), .arithmetic(_, let a, let b), .stringContains(let a, let b),
            .stringHasPrefix(let a, let b), .elementContains(let a, let b), .keyValue(let a, let b):
            return a.readsOnlyOwnAttributes && b.readsOnlyOwnAttributes
        case .conditional(let a, let b, let c):
            return a.readsOnlyOwnAttributes && b.readsOnlyOwnAttributes && c.readsOnlyOwnAttributes
        }
    }
}

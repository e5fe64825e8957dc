import Foundation
import TrellisCore
import TrellisGraph
import TrellisJournal

extension ModelContext {
    /// The objects that match, in order: pending inserts and updates included, pending deletes left out, sort,
    /// offset and limit applied to the merge.
    ///
    /// ```swift
    /// let open = try context.fetch(FetchDescriptor<Chore>(
    ///     predicate: #Predicate { !$0.done }, sortBy: [SortDescriptor(\.due)], fetchLimit: 20))
    /// ```
    /// - Complexity: see `explain(_:)`: O(candidates + pending + matches log matches), candidates found by column
    ///   masks (`QueryPlan.Access.columnScan`) costing O(n / 64) per comparison; never waits for a save.
    public func fetch<T: Model>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        try fetchIdentifiers(descriptor).map { materialize($0, as: T.self) }
    }

    /// The matches as a collection that makes objects only when they are read, `batchSize` at a time.
    ///
    /// ```swift
    /// let all = try context.fetch(FetchDescriptor<Chore>(), batchSize: 100)
    /// print(all.count, all[99_999].title)     // one batch of 100 objects made
    /// ```
    /// - Complexity: that of `fetchIdentifiers(_:)`; O(batchSize) for the first read in each batch.
    public func fetch<T: Model>(_ descriptor: FetchDescriptor<T>, batchSize: Int) throws -> FetchResults<T> {
        precondition(batchSize > 0, "Trellis: batchSize must be positive")
        return FetchResults(identifiers: try fetchIdentifiers(descriptor), context: self, batchSize: batchSize)
    }

    /// The IDs of the matches, in order, without making any object.
    /// - Complexity: as `fetch(_:)`.
    public func fetchIdentifiers<T: Model>(_ descriptor: FetchDescriptor<T>) throws -> [ObjectID] {
        let query = try compile(descriptor)
        let ids = query.executor.identifiers()
        if let error = query.failure.error { throw error }
        return ids
    }

    /// The number of matches (after offset and limit). A predicate made only of index bounds is counted from the
    /// index without visiting objects; one made only of comparisons of the entity's own attributes with constants is
    /// counted by bit masks over leaves of 64 objects, without making IDs.
    /// - Complexity: O(log n) per index probe plus O(pending) when the index expresses the predicate; O(n / 64 × t)
    ///   for t comparisons plus O(pending) by column masks; else as a fetch.
    public func fetchCount<T: Model>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        let query = try compile(descriptor)
        let n = query.executor.count()
        if let error = query.failure.error { throw error }
        return n
    }

    /// The matches as dictionaries of the named attributes, in order, without making objects.
    ///
    /// ```swift
    /// let rows = try context.fetchProperties(FetchDescriptor<Chore>(), [\.title, \.due])
    /// print(rows[0]["title"] ?? .null)
    /// ```
    /// - Complexity: as `fetchIdentifiers(_:)` plus O(matches × properties).
    public func fetchProperties<T: Model>(
        _ descriptor: FetchDescriptor<T>, _ properties: [PartialKeyPath<T>]
    ) throws -> [[String: Value]] {
        let binding = binding(for: T.self)
        let columns = try properties.map { try attributeColumn($0, binding) }
        let view = self.view
        return try fetchIdentifiers(descriptor).map { id in
            var row: [String: Value] = [:]
            for (name, a) in columns { row[name] = view.value(id, a) ?? .null }
            return row
        }
    }

    /// How a fetch would run: the index used (if any), its bounds, the candidate count, and what is left to do.
    ///
    /// ```swift
    /// let plan = try context.explain(FetchDescriptor<Chore>(predicate: #Predicate { $0.estimate == 3 }))
    /// #expect(plan.access == .indexEquality && plan.index == ["estimate"])
    /// ```
    /// - Complexity: O(log n) per index probe; a plan through a to-one relationship also visits the related objects
    ///   its condition selects (or scans their entity when it is at most a quarter the size).
    public func explain<T: Model>(_ descriptor: FetchDescriptor<T>) throws -> QueryPlan {
        let query = try compile(descriptor)
        return query.executor.explain(pending: view.touched(entity: query.executor.entity).count)
    }

    /// Deletes every object of `T` the predicate selects (all of them when nil) from this context's view, as pending
    /// deletes with their cascades; `save()` commits them. (`Store.batchDelete` deletes in the store directly.)
    ///
    /// ```swift
    /// try context.delete(model: Chore.self, where: #Predicate { $0.done })
    /// ```
    /// - Complexity: that of the fetch, plus O(c) for c objects the cascades reach.
    public func delete<T: Model>(model: T.Type, where predicate: Predicate<T>? = nil) throws {
        for id in try fetchIdentifiers(FetchDescriptor<T>(predicate: predicate)) { delete(id) }
    }

    /// The attribute a key path names, with its name; throws for anything else.
    func attributeColumn<T: Model>(_ keyPath: PartialKeyPath<T>, _ binding: EntityBinding) throws -> (String, Int) {
        guard let a = binding.attribute(at: KeyPathProbe.resolve(keyPath, on: T.self)) else {
            throw TrellisError(.invalidArgument, "a key path of \(T.self) does not name an attribute")
        }
        return (schema.layouts[Int(binding.entity)].attributes[a].name, a)
    }

    /// A compiled fetch, and where Foundation's evaluation reports an error.
    struct CompiledQuery {
        let executor: QueryExecutor
        let failure: FailureBox
    }

    final class FailureBox {
        var error: (any Error)?
    }

    func compile<T: Model>(_ descriptor: FetchDescriptor<T>) throws -> CompiledQuery {
        let binding = binding(for: T.self)
        let failure = FailureBox()
        var compiled: QueryExpression?
        var objectTest: ((ObjectID) -> Bool)?
        if let predicate = descriptor.predicate {
            let compiler = PredicateCompiler(schema: schema) { [unowned self] in self.binding(for: $0) }
            let expression = compiler.compile(predicate)
            compiled = expression
            if expression.isOpaque {
                objectTest = { [unowned self] id in
                    do {
                        return try predicate.evaluate(materialize(id, as: T.self))
                    } catch {
                        if failure.error == nil { failure.error = error }
                        return false
                    }
                }
            }
        }
        let keys = descriptor.sortBy.map { SortKey($0, binding: binding) }
        var objectOrder: ((ObjectID, ObjectID) -> Bool)?
        if keys.contains(where: { $0 == nil }) {
            let descriptors = descriptor.sortBy
            objectOrder = { [unowned self] a, b in
                let (x, y) = (materialize(a, as: T.self), materialize(b, as: T.self))
                for d in descriptors {
                    switch d.compare(x, y) {
                    case .orderedAscending: return true
                    case .orderedDescending: return false
                    case .orderedSame: continue
                    }
                }
                return false
            }
        }
        if let limit = descriptor.fetchLimit, limit < 0 {
            throw TrellisError(.invalidArgument, "fetchLimit \(limit) is negative")
        }
        let view = descriptor.includePendingChanges ? self.view : ContextView(base: snapshot, layers: [])
        let executor = QueryExecutor(
            view: view, entity: binding.entity, predicate: compiled, objectTest: objectTest,
            sort: keys.compactMap { $0 }, objectOrder: objectOrder, offset: max(0, descriptor.fetchOffset ?? 0),
            limit: descriptor.fetchLimit)
        return CompiledQuery(executor: executor, failure: failure)
    }
}

import Foundation
import TrellisCore
import TrellisGraph
import TrellisJournal

/// What to fetch: objects of one model class, filtered by a Foundation `#Predicate`, ordered by `SortDescriptor`s,
/// windowed by offset and limit.
///
/// ```swift
/// var descriptor = FetchDescriptor<Chore>(
///     predicate: #Predicate { !$0.done && $0.due < deadline },
///     sortBy: [SortDescriptor(\.due)])
/// descriptor.fetchLimit = 50
/// let next = try context.fetch(descriptor)
/// ```
///
/// Predicates over attributes, to-one paths (`$0.project?.name`), `objectID`, to-many counts and
/// `contains(where:)`/`allSatisfy` are compiled and planned with indexes; anything else still works, evaluated by
/// Foundation on each candidate object. Ties in the sort order are broken by `ObjectID`, so results are repeatable.
public struct FetchDescriptor<T: Model>: Sendable {
    /// Which objects to fetch; nil for all of them.
    public var predicate: Predicate<T>?
    /// The order of the results: each descriptor breaks the ties of the ones before it. Unsorted results come in
    /// `ObjectID` order.
    public var sortBy: [SortDescriptor<T>]
    /// The most objects to return (nil: all).
    public var fetchLimit: Int?
    /// How many matching objects to skip first.
    public var fetchOffset: Int?
    /// Whether the context's pending changes (and its ancestors') take part; false reads the context's snapshot as it
    /// is, as if nothing were pending.
    public var includePendingChanges = true

    /// A descriptor of these parts; every part is optional.
    public init(
        predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = [], fetchLimit: Int? = nil,
        fetchOffset: Int? = nil
    ) {
        self.predicate = predicate
        self.sortBy = sortBy
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
    }
}

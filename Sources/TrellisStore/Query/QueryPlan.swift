import TrellisCore
import TrellisGraph
import TrellisJournal

/// How a fetch finds its objects: the access path the planner chose and what is left to evaluate.
/// `ModelContext.explain(_:)` returns it; its description reads like a database's `EXPLAIN`.
///
/// ```swift
/// let plan = try context.explain(FetchDescriptor<Chore>(predicate: #Predicate { $0.estimate > 3 }))
/// print(plan)     // Chore: index range on (estimate) (estimate > 3), ~120 candidates; filter: none; sort: in memory
/// #expect(plan.index == ["estimate"])
/// ```
public struct QueryPlan: Sendable, Equatable, CustomStringConvertible {
    /// The ways a fetch can reach candidate objects.
    public enum Access: Sendable, Equatable {
        /// Every object of the entity, in `ObjectID` order.
        case fullScan
        /// Every object of the entity, the predicate evaluated a column at a time over leaves of 64 objects (bit masks
        /// instead of per-object evaluation): the plan for predicates made only of comparisons of the entity's own
        /// attributes with constants when no index narrows the candidates well.
        case columnScan
        /// A unique index with every attribute bound by equality: at most one object.
        case uniqueLookup
        /// An index whose leading attributes are bound by equality.
        case indexEquality
        /// An index with `IN` lists (and equalities) on its leading attributes: one probe per combination.
        case indexIn
        /// An index with equalities on a prefix and a range on the next attribute.
        case indexRange
        /// An index walked in the sort order, stopping once the limit is reached.
        case orderedIndexScan
        /// A condition on a to-one relationship's target (`$0.project?.name == "Launch"`): the related objects that
        /// pass it are found first, by their own plan (`related`), and the candidates are the objects pointing at
        /// them, read from the inverse relationship (`Project.chores`).
        case throughRelationship
    }

    /// The entity fetched.
    public let entity: String
    /// How the candidates are found.
    public let access: Access
    /// The attributes of the index used, in index order; nil for a full scan.
    public let index: [String]?
    /// The bounds applied to the index, for people: `estimate > 3`, `due IN 4 values`.
    public let bounds: [String]
    /// How many objects of the base snapshot the access path yields before filtering.
    public let candidates: Int
    /// Whether conditions beyond the index bounds are evaluated per candidate.
    public let filters: Bool
    /// Whether the predicate (or a sort key) is beyond the compiler, so Foundation evaluates it on objects.
    public let evaluatesOnObjects: Bool
    /// Whether the results come out of the index in sort order (no sort step).
    public let sortedByIndex: Bool
    /// How many objects pending changes make the fetch re-evaluate over the context's view.
    public let pendingObjects: Int
    /// For `.throughRelationship`: the to-one relationship followed (`project`).
    public let relationship: String?
    /// For `.throughRelationship`: the inverse relationship the candidates are read from (`chores`).
    public let inverse: String?
    /// For `.throughRelationship`: how the related objects are found, a plan of the relationship's target entity.
    public var related: QueryPlan? { relatedPlans.first }
    /// `related`, boxed: a struct cannot hold itself.
    let relatedPlans: [QueryPlan]

    init(
        entity: String, access: Access, index: [String]?, bounds: [String], candidates: Int, filters: Bool,
        evaluatesOnObjects: Bool, sortedByIndex: Bool, pendingObjects: Int, relationship: String? = nil,
        inverse: String? = nil, related: QueryPlan? = nil
    ) {
        self.entity = entity
        self.access = access
        self.index = index
        self.bounds = bounds
        self.candidates = candidates
        self.filters = filters
        self.evaluatesOnObjects = evaluatesOnObjects
        self.sortedByIndex = sortedByIndex
        self.pendingObjects = pendingObjects
        self.relationship = relationship
        self.inverse = inverse
        self.relatedPlans = related.map { [$0] } ?? []
    }

    /// The plan on one line, for logs and tests.
    public var description: String {
        var text = "\(entity): " + accessDescription + "; filter: "
        text += evaluatesOnObjects ? "Foundation on objects" : (filters ? "compiled" : "none")
        text += "; sort: " + (sortedByIndex ? "by index" : "in memory")
        if pendingObjects > 0 { text += "; \(pendingObjects) pending objects merged" }
        return text
    }

    /// How the candidates are found, with their count: `index range on (due) (due < …), ~120 candidates`, or
    /// `through project (Project: index equality on (name) (name = Launch), ~2 candidates; filter: none) back
    /// through Project.chores, ~40 candidates`.
    private var accessDescription: String {
        var text: String
        switch access {
        case .fullScan: text = "full scan"
        case .columnScan: text = "column scan"
        case .uniqueLookup: text = "unique lookup"
        case .indexEquality: text = "index equality"
        case .indexIn: text = "index IN"
        case .indexRange: text = "index range"
        case .orderedIndexScan: text = "ordered index scan"
        case .throughRelationship:
            text = "through \(relationship ?? "?")"
            if let related {
                text += " (\(related.entity): \(related.accessDescription); filter: "
                text += related.filters ? "compiled)" : "none)"
                text += " back through \(related.entity).\(inverse ?? "?")"
            }
        }
        if let index { text += " on (\(index.joined(separator: ", ")))" }
        if !bounds.isEmpty { text += " (\(bounds.joined(separator: ", ")))" }
        return text + ", ~\(candidates) candidates"
    }
}

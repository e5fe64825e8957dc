import TrellisCore
import TrellisGraph
import TrellisJournal

/// A fetch by entity and attribute names, for tools, migrations and scripts: the dynamic twin of `FetchDescriptor`,
/// planned with the same indexes and run by the same executor.
///
/// ```swift
/// let query = DynamicQuery(
///     "Chore", where: .and([.equal("done", false), .less("due", .date(deadline)), .equal("project.name", "Launch")]),
///     sortBy: [.init("due")], limit: 50)
/// let ids = try store.snapshot.fetch(query)
/// print(try store.snapshot.explain(query))       // Chore: index range on (due) (due < …), ~120 candidates; …
/// ```
///
/// A name may be a path through to-one relationships (`project.name`); a null target makes the value null.
public struct DynamicQuery: Sendable, Equatable {
    /// A condition on attribute values; values are converted to the attribute's type as an insert would.
    public indirect enum Condition: Sendable, Equatable {
        /// The attribute's value equals this one (`.null` selects the nulls).
        case equal(String, Value)
        /// The attribute's value differs from this one.
        case notEqual(String, Value)
        /// The attribute's value sorts before this one (in `Value`'s order); a null never matches an ordering.
        case less(String, Value)
        /// The attribute's value sorts before this one or equals it.
        case lessOrEqual(String, Value)
        /// The attribute's value sorts after this one.
        case greater(String, Value)
        /// The attribute's value sorts after this one or equals it.
        case greaterOrEqual(String, Value)
        /// The attribute's value is one of these (SQL's `IN`).
        case among(String, [Value])
        /// The collection attribute holds this element (`$0.tags.contains("x")`); a null collection holds none.
        case contains(String, Value)
        /// The collection attribute holds no element (a null collection is not empty: it is nothing).
        case isEmpty(String)
        /// The `[String: String]` attribute holds `key` with this value (`$0.metadata["color"] == "red"`), or with
        /// any value for `.null` (`$0.metadata["color"] != nil`).
        case entry(String, key: String, Value)
        /// The dictionary attribute's value for `key` (`[String: String]` or `[String: MetadataValue]`) passes the test
        /// against `value`, as `$0.info["rating"] > 3` would read in Swift with the missing key as nil: a missing key
        /// passes only `.notEqual`, and an ordering holds only between values of one kind (`MetadataValue`'s order).
        case keyValue(String, key: String, KeyTest, MetadataValue)
        /// Every condition holds.
        case and([Condition])
        /// At least one condition holds.
        case or([Condition])
        /// The condition does not hold.
        case not(Condition)
    }

    /// How `Condition.keyValue` tests a dictionary key's value.
    public enum KeyTest: String, Sendable, Equatable, CaseIterable {
        /// `==`
        case equal = "=="
        /// `!=`
        case notEqual = "!="
        /// `<`
        case less = "<"
        /// `<=`
        case lessOrEqual = "<="
        /// `>`
        case greater = ">"
        /// `>=`
        case greaterOrEqual = ">="
    }

    /// One sort key: an attribute name (or to-one path) and a direction. Ties are broken by `ObjectID`.
    public struct Sort: Sendable, Equatable {
        /// The attribute's name.
        public var name: String
        /// Whether the order is ascending.
        public var ascending: Bool

        /// A sort on the attribute named `name`.
        public init(_ name: String, ascending: Bool = true) {
            self.name = name
            self.ascending = ascending
        }
    }

    /// The name of the entity queried.
    public var entity: String
    /// Which objects match; nil for all.
    public var condition: Condition?
    /// The order of the results; by `ObjectID` when empty.
    public var sortBy: [Sort]
    /// The most results returned; nil for all.
    public var limit: Int?
    /// How many matching results to skip first.
    public var offset: Int?

    /// A query of `entity` with these parts; only the entity is required.
    public init(
        _ entity: String, where condition: Condition? = nil, sortBy: [Sort] = [], limit: Int? = nil, offset: Int? = nil
    ) {
        self.entity = entity
        self.condition = condition
        self.sortBy = sortBy
        self.limit = limit
        self.offset = offset
    }
}

extension Graph {
    /// The IDs of the objects the query selects, in its order.
    /// - Complexity: as `ModelContext.fetchIdentifiers(_:)`: index-planned, O(candidates + matches log matches).
    public func fetch(_ query: DynamicQuery) throws -> [ObjectID] {
        try query.executor(ContextView(base: self, layers: [])).identifiers()
    }

    /// The number of objects the query selects (after offset and limit).
    /// - Complexity: O(log n) per index probe when the index bounds express the whole condition; O(n / 64 × t) by
    ///   column masks for t comparisons when every condition is on the entity's own attributes; else as `fetch`.
    public func count(_ query: DynamicQuery) throws -> Int {
        try query.executor(ContextView(base: self, layers: [])).count()
    }

    /// How the query would run.
    /// - Complexity: O(log n) per index probe; a plan through a to-one relationship also visits the related objects
    ///   its condition selects (or scans their entity when it is at most a quarter the size).
    public func explain(_ query: DynamicQuery) throws -> QueryPlan {
        try query.executor(ContextView(base: self, layers: [])).explain(pending: 0)
    }
}

extension ModelContext {
    /// The IDs of the objects the query selects in this context's view (pending changes included).
    /// - Complexity: as `fetchIdentifiers(_:)` for a `FetchDescriptor`.
    public func fetchIdentifiers(_ query: DynamicQuery) throws -> [ObjectID] {
        try query.executor(view).identifiers()
    }

    /// The number of objects the query selects in this context's view.
    /// - Complexity: as `fetchCount(_:)` for a `FetchDescriptor`.
    public func fetchCount(_ query: DynamicQuery) throws -> Int {
        try query.executor(view).count()
    }
}

extension DynamicQuery {
    func executor(_ view: ContextView) throws -> QueryExecutor {
        let schema = view.schema
        let entity = try schema.entityNumber(self.entity)
        let sort = try sortBy.map { s -> SortKey in
            let (hops, a) = try Self.resolve(s.name, entity, schema)
            guard hops.isEmpty else {
                throw TrellisError(
                    .invalidArgument, "sorting by the path '\(s.name)' is not supported; sort by an attribute")
            }
            return SortKey(attribute: a, ascending: s.ascending)
        }
        if let limit, limit < 0 { throw TrellisError(.invalidArgument, "limit \(limit) is negative") }
        return QueryExecutor(
            view: view, entity: entity, predicate: try condition.map { try Self.compile($0, entity, schema) },
            objectTest: nil, sort: sort, objectOrder: nil, offset: max(0, offset ?? 0), limit: limit)
    }

    /// The to-one hops and the attribute position a dotted name reaches. At each entity, an attribute named by the
    /// rest of the path (a composite's field, `address.city`) is taken before a relationship hop.
    static func resolve(_ name: String, _ entity: UInt32, _ schema: Schema) throws -> (hops: [Int], attribute: Int) {
        var parts = name.split(separator: ".").map(String.init)
        guard let last = parts.popLast() else { throw TrellisError(.unknownAttribute, "an empty attribute name") }
        var current = entity
        var hops: [Int] = []
        for (i, part) in parts.enumerated() {
            let layout = schema.layouts[Int(current)]
            let rest = (parts[i...] + [last]).joined(separator: ".")
            if let a = layout.attributes.firstIndex(where: { $0.name == rest }) { return (hops, a) }
            let r = try layout.relationshipIndex(part)
            guard !layout.relationships[r].isToMany else {
                throw TrellisError(
                    .invalidArgument, "'\(part)' in '\(name)' is to-many; paths follow to-one relationships")
            }
            hops.append(r)
            current = layout.relationships[r].target
        }
        return (hops, try schema.layouts[Int(current)].attributeIndex(last))
    }

    private static func compile(_ condition: Condition, _ entity: UInt32, _ schema: Schema) throws -> QueryExpression {
        func attribute(_ name: String, _ value: Value) throws -> (QueryExpression, Value) {
            let (hops, a) = try resolve(name, entity, schema)
            var target = entity
            for hop in hops { target = schema.layouts[Int(target)].relationships[hop].target }
            let description = schema.layouts[Int(target)].attributes[a]
            guard let normalized = description.type.normalized(value) else {
                throw TrellisError(.typeMismatch, "'\(name)' is \(description.type); \(value) does not fit")
            }
            return (.attribute(slot: 0, hops: hops, attribute: a), normalized)
        }
        func compare(_ op: QueryExpression.Comparison, _ name: String, _ value: Value) throws -> QueryExpression {
            let (lhs, v) = try attribute(name, value)
            return .compare(op, lhs, .constant(v))
        }
        func combine(
            _ parts: [Condition], empty: Bool, _ join: (QueryExpression, QueryExpression) -> QueryExpression
        ) throws -> QueryExpression {
            let compiled = try parts.map { try compile($0, entity, schema) }
            guard var result = compiled.first else { return .constant(.bool(empty)) }
            for next in compiled.dropFirst() { result = join(result, next) }
            return result
        }
        switch condition {
        case .equal(let n, let v): return try compare(.equal, n, v)
        case .notEqual(let n, let v): return try compare(.notEqual, n, v)
        case .less(let n, let v): return try compare(.less, n, v)
        case .lessOrEqual(let n, let v): return try compare(.lessOrEqual, n, v)
        case .greater(let n, let v): return try compare(.greater, n, v)
        case .greaterOrEqual(let n, let v): return try compare(.greaterOrEqual, n, v)
        case .among(let n, let values):
            let lhs = try attribute(n, .null).0
            return .isIn(lhs, Set(try values.map { try attribute(n, $0).1 }))
        case .contains(let n, let v):
            let (lhs, _) = try attribute(n, .null)
            guard case .attribute(_, let hops, let a) = lhs else { return .opaque }
            var target = entity
            for hop in hops { target = schema.layouts[Int(target)].relationships[hop].target }
            let type = schema.layouts[Int(target)].attributes[a].type
            guard let element = type.elementType else {
                throw TrellisError(.typeMismatch, "'\(n)' is \(type), not a collection")
            }
            guard let normalized = element.normalized(v), !normalized.isNull else {
                throw TrellisError(.typeMismatch, "'\(n)' holds \(element) elements; \(v) does not fit")
            }
            return .elementContains(lhs, .constant(normalized))
        case .entry(let n, let key, let v):
            let (lhs, _) = try attribute(n, .null)
            guard case .attribute(_, let hops, let a) = lhs else { return .opaque }
            var target = entity
            for hop in hops { target = schema.layouts[Int(target)].relationships[hop].target }
            let type = schema.layouts[Int(target)].attributes[a].type
            guard type.isDictionary else {
                throw TrellisError(.typeMismatch, "'\(n)' is \(type), not a dictionary")
            }
            let read = QueryExpression.keyValue(lhs, .constant(.string(key)))
            switch v {
            case .null: return .compare(.notEqual, read, .constant(.null))
            case .string: return .compare(.equal, read, .constant(v))
            case .bool, .int, .double:
                guard type == .metadataDictionary else {
                    throw TrellisError(.typeMismatch, "'\(n)' holds \(type) values; \(v) does not fit")
                }
                return .compare(.equal, read, .constant(v))
            default: throw TrellisError(.typeMismatch, "'\(n)' holds \(type) values; \(v) does not fit")
            }
        case .keyValue(let n, let key, let test, let v):
            let (lhs, _) = try attribute(n, .null)
            guard case .attribute(_, let hops, let a) = lhs else { return .opaque }
            var target = entity
            for hop in hops { target = schema.layouts[Int(target)].relationships[hop].target }
            let type = schema.layouts[Int(target)].attributes[a].type
            guard type.isDictionary else {
                throw TrellisError(.typeMismatch, "'\(n)' is \(type), not a dictionary")
            }
            let constant: Value = v.isNull ? QueryExpression.metadataNull : v.value
            let op: ComparisonOperator
            switch test {
            case .equal: op = .equal
            case .notEqual: op = .notEqual
            case .less: op = .less
            case .lessOrEqual: op = .lessOrEqual
            case .greater: op = .greater
            case .greaterOrEqual: op = .greaterOrEqual
            }
            return .compare(op, .keyValue(lhs, .constant(.string(key))), .constant(constant))
        case .isEmpty(let n):
            let (lhs, _) = try attribute(n, .null)
            return .compare(.equal, .count(lhs), .constant(.int(0)))
        case .and(let parts): return try combine(parts, empty: true) { .and($0, $1) }
        case .or(let parts): return try combine(parts, empty: false) { .or($0, $1) }
        case .not(let inner): return .not(try compile(inner, entity, schema))
        }
    }
}

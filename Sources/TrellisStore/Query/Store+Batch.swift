import Foundation
import TrellisCore
import TrellisGraph
import TrellisJournal

/// The result of a batch operation: the objects it changed and the commit that changed them.
///
/// ```swift
/// let result = try store.batchDelete(Chore.self, where: #Predicate { $0.done })
/// print(result.objects.count, result.sequence)
/// ```
public struct BatchResult: Sendable, Equatable {
    /// The objects inserted, updated or deleted (for a delete, the ones the predicate selected; delete rules may
    /// remove more, and the commit's change set lists them all).
    public let objects: [ObjectID]
    /// The sequence number of the commit; the store's sequence when nothing matched.
    public let sequence: UInt64
}

/// One attribute assignment of a batch update.
///
/// ```swift
/// try store.batchUpdate(Chore.self, where: #Predicate { $0.due < now }, set: [.init(\.done, true)])
/// ```
public struct BatchAssignment<T: Model>: Sendable {
    let keyPath: KeyPathKey
    let value: Value

    /// - Note: The value is stored as the attribute's `Value`; the key path must name an `@Attribute`.
    public init<V: PersistentValue>(_ keyPath: KeyPath<T, V>, _ value: V) {
        self.keyPath = KeyPathKey(keyPath)
        self.value = value.persistentValue
    }

    /// An assignment of an enum attribute: its raw value is stored.
    @_disfavoredOverload
    public init<V: RawRepresentable>(_ keyPath: KeyPath<T, V>, _ value: V) where V.RawValue: PersistentValue {
        self.keyPath = KeyPathKey(keyPath)
        self.value = RawValueCodec<V>.stored(value)
    }

    /// An assignment of an optional enum attribute: its raw value, or null.
    @_disfavoredOverload
    public init<V: RawRepresentable>(_ keyPath: KeyPath<T, V?>, _ value: V?) where V.RawValue: PersistentValue {
        self.keyPath = KeyPathKey(keyPath)
        self.value = OptionalRawValueCodec<V>.stored(value)
    }
}

/// The attribute values and to-one targets of one object a batch insert makes, set by key path.
///
/// ```swift
/// try store.batchInsert(Chore.self, count: 1_000) { i, row in
///     row[\.title] = "step \(i)"
///     row.setTarget(\.project, launchID)
/// }
/// ```
public struct BatchRow<T: Model> {
    let binding: EntityBinding
    let schema: Schema
    var values: [Value]
    var targets: [(relationship: Int, target: ObjectID)] = []

    private func ordinal(_ keyPath: AnyKeyPath) -> Int {
        guard case .property(let o)? = KeyPathProbe.resolve(keyPath, on: T.self) else {
            preconditionFailure("Trellis: a key path of \(T.self) in a batch row names no stored property")
        }
        return o
    }

    /// The attribute position a key path names: an attribute, or a field of a composite (`\.address.city`).
    private func column(_ keyPath: AnyKeyPath) -> Int {
        guard let a = binding.attribute(at: KeyPathProbe.resolve(keyPath, on: T.self)) else {
            preconditionFailure("Trellis: a key path of \(T.self) in a batch row names no attribute")
        }
        return a
    }

    /// An attribute's value in the row (its default until set).
    /// - Complexity: O(1) after the first use of the key path.
    public subscript<V: PersistentValue>(keyPath: KeyPath<T, V>) -> V {
        get {
            let v = values[column(keyPath)]
            guard let typed = V(persistentValue: v) else { preconditionFailure("Trellis: \(v) is not a \(V.self)") }
            return typed
        }
        set { values[column(keyPath)] = newValue.persistentValue }
    }

    /// An enum attribute's value in the row (its default until set); its raw value is stored.
    @_disfavoredOverload
    public subscript<V: RawRepresentable>(keyPath: KeyPath<T, V>) -> V where V.RawValue: PersistentValue {
        get { typed(keyPath, RawValueCodec<V>.self) }
        set { values[column(keyPath)] = RawValueCodec<V>.stored(newValue) }
    }

    /// An optional enum attribute's value in the row (its default until set).
    @_disfavoredOverload
    public subscript<V: RawRepresentable>(keyPath: KeyPath<T, V?>) -> V? where V.RawValue: PersistentValue {
        get { typed(keyPath, OptionalRawValueCodec<V>.self) }
        set { values[column(keyPath)] = OptionalRawValueCodec<V>.stored(newValue) }
    }

    private func typed<C: AttributeCodec>(_ keyPath: AnyKeyPath, _ codec: C.Type) -> C.Wrapped {
        let v = values[column(keyPath)]
        guard let typed = C.value(of: v) else { preconditionFailure("Trellis: \(v) is not a \(C.Wrapped.self)") }
        return typed
    }

    /// Points a to-one relationship at an existing object (or at nothing).
    public mutating func setTarget<R: Model>(_ keyPath: KeyPath<T, R?>, _ target: ObjectID?) {
        let r = binding.relationship(ordinal(keyPath))
        targets.removeAll { $0.relationship == r }
        if let target { targets.append((r, target)) }
    }
}

extension Store {
    /// Inserts `count` objects whose values `fill` sets, as one commit, without making model objects.
    ///
    /// An attribute `fill` leaves alone gets its property initializer's value, computed for each object as `init()`
    /// would: `var id = UUID()` gives every row its own UUID. (Initializers that give two fresh objects different
    /// values, as `UUID()` and `Date()` do, are run once a row; the others once.)
    /// - Complexity: O(count × attributes), plus the commit; O(count × properties) more, for reflecting a fresh
    ///   object each row, when the model has an initializer computed per object.
    @discardableResult
    public func batchInsert<T: Model>(
        _ type: T.Type, count: Int, _ fill: (Int, inout BatchRow<T>) throws -> Void
    ) throws -> BatchResult {
        let binding = contexts.binding(for: type, schema: schema)
        let layout = schema.layouts[Int(binding.entity)]
        // The property initializers' values, from two fresh objects: those that differ are computed per object.
        let first = Self.initialValues(T(), binding, layout)
        let second = Self.initialValues(T(), binding, layout)
        let perObject = layout.attributes.indices.filter { !first[$0].isIdentical(to: second[$0]) }
        var tx = transaction()
        var ids: [ObjectID] = []
        ids.reserveCapacity(count)
        for i in 0..<count {
            var defaults = first
            if !perObject.isEmpty {
                let fresh = i == 0 ? first : i == 1 ? second : Self.initialValues(T(), binding, layout)
                for a in perObject { defaults[a] = fresh[a] }
            }
            var row = BatchRow<T>(binding: binding, schema: schema, values: defaults)
            try fill(i, &row)
            let id = tx.insert(entity: binding.entity, row: row.values)
            for (r, target) in row.targets { try tx.link(id, layout.relationships[r].name, target) }
            ids.append(id)
        }
        let commit = try commit(tx)
        return BatchResult(objects: ids, sequence: commit.sequence)
    }

    /// The attribute values an unmanaged model holds (its property initializers' right after `init()`), by attribute
    /// index, normalized to the schema's types; the stored default where a property holds none.
    private static func initialValues(_ model: Model, _ binding: EntityBinding, _ layout: EntityLayout) -> [Value] {
        var row = layout.attributes.map { $0.defaultValue ?? .null }
        for (ordinal, property) in ModelMirror.properties(of: model).enumerated() {
            switch binding.columns[ordinal] {
            case .attribute(let a):
                guard let value = property.storage.unmanagedValue else { continue }
                row[a] = layout.attributes[a].type.normalized(value) ?? row[a]
            case .composite(let leaves):
                for (a, value) in zip(leaves, property.storage.unmanagedLeaves ?? []) {
                    row[a] = layout.attributes[a].type.normalized(value) ?? row[a]
                }
            case .relationship: continue
            }
        }
        return row
    }

    /// Sets attributes of every object the predicate selects (all objects of the type when nil), as one commit,
    /// without making model objects; view contexts follow it like any commit.
    /// - Complexity: that of the fetch (index-planned) plus O(matches × assignments).
    @discardableResult
    public func batchUpdate<T: Model>(
        _ type: T.Type, where predicate: Predicate<T>? = nil, set assignments: [BatchAssignment<T>]
    ) throws -> BatchResult {
        let binding = contexts.binding(for: type, schema: schema)
        let columns = try assignments.map { assignment -> (AttributeKey, Value) in
            guard let a = binding.attribute(at: KeyPathProbe.resolve(assignment.keyPath.keyPath, on: type)) else {
                throw TrellisError(.invalidArgument, "a batch assignment of \(type) names no attribute")
            }
            return (AttributeKey(entity: binding.entity, index: a), assignment.value)
        }
        return try batch(type, predicate) { tx, ids in
            for id in ids {
                for (key, value) in columns { try tx.set(id, key, value) }
            }
        }
    }

    /// Deletes every object the predicate selects (all objects of the type when nil), as one commit, applying the
    /// delete rules, without making model objects; view contexts follow it like any commit.
    /// - Complexity: that of the fetch plus the commit (in proportion to what the delete rules reach).
    @discardableResult
    public func batchDelete<T: Model>(_ type: T.Type, where predicate: Predicate<T>? = nil) throws -> BatchResult {
        try batch(type, predicate) { tx, ids in
            for id in ids { try tx.delete(id) }
        }
    }

    /// Selects on the newest snapshot and commits on condition that no commit came in between; retries otherwise.
    private func batch<T: Model>(
        _ type: T.Type, _ predicate: Predicate<T>?, _ build: (inout Transaction, [ObjectID]) throws -> Void
    ) throws -> BatchResult {
        while true {
            let reader = ModelContext(self)
            let selected = try reader.fetchIdentifiers(FetchDescriptor<T>(predicate: predicate))
            let base = reader.snapshot
            var tx = transaction()
            try build(&tx, selected)
            let expected = base.sequence
            tx.checks.append { head in
                if head.sequence != expected {
                    throw TrellisError(.staleSnapshot, "a commit came in while the batch selected its objects")
                }
            }
            do {
                let commit = try commit(tx)
                return BatchResult(objects: selected, sequence: commit.sequence)
            } catch let error as TrellisError where error.code == .staleSnapshot {
                continue
            }
        }
    }
}

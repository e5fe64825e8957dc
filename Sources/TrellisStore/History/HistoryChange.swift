import Foundation
import TrellisCore
import TrellisGraph

/// What one commit did to one object: inserted it (with its values), updated some attributes (with old and new
/// values), or deleted it (with the values and relationship targets it had).
///
/// Read values by name (`oldValue("name")`) or through a model's key path (`oldValue(\Person.name)`). A value the
/// change does not record is nil: an insert has no old values, a delete no new ones, an update only the attributes
/// it changed.
public struct HistoryChange: Sendable {
    /// What happened to the object.
    public enum Kind: Sendable, Equatable {
        /// The commit inserted the object.
        case insert
        /// The commit changed some of its attributes.
        case update
        /// The commit deleted it.
        case delete
    }

    /// Insert, update or delete.
    public let kind: Kind
    /// The object.
    public let objectID: ObjectID
    /// The schema the commit was written in.
    let schema: Schema
    /// What the change set holds for the object, shared with it (not copied): the inserted or deleted values, or the
    /// update's attribute changes.
    let values: [Value]
    let updates: [ChangeSet.AttributeChange]
    /// For a delete: the targets each relationship held, by relationship name.
    public let deletedTargets: [String: [ObjectID]]

    init(
        kind: Kind, objectID: ObjectID, schema: Schema, values: [Value] = [],
        updates: [ChangeSet.AttributeChange] = [], deletedTargets: [String: [ObjectID]] = [:]
    ) {
        self.kind = kind
        self.objectID = objectID
        self.schema = schema
        self.values = values
        self.updates = updates
        self.deletedTargets = deletedTargets
    }

    /// The name of its entity, in the schema the commit was written in.
    public var entityName: String { schema.layouts[Int(objectID.entity)].name }

    /// The attribute names of its entity, in schema order.
    public var attributeNames: [String] { schema.layouts[Int(objectID.entity)].attributes.map(\.name) }

    /// The attributes the change records a new value for (an insert: all; an update: those it changed; a delete:
    /// none), in schema order.
    public var changedAttributes: [String] {
        switch kind {
        case .insert: return attributeNames
        case .update: return updates.map(\.attribute.index).sorted().map { attributeNames[$0] }
        case .delete: return []
        }
    }

    private func index(_ attribute: String) -> Int? {
        try? schema.layouts[Int(objectID.entity)].attributeIndex(attribute)
    }

    /// The recorded value of attribute `a` before (`old`) or after the commit.
    private func value(_ a: Int, old: Bool) -> Value? {
        switch kind {
        case .insert: return old || a >= values.count ? nil : values[a]
        case .delete: return !old || a >= values.count ? nil : values[a]
        case .update:
            for change in updates where change.attribute.index == a { return old ? change.old : change.new }
            return nil
        }
    }

    /// The value `attribute` had before the commit; nil when the change does not record one (an insert, an
    /// attribute an update did not change) or the entity has no such attribute.
    public func oldValue(_ attribute: String) -> Value? { index(attribute).flatMap { value($0, old: true) } }

    /// The value `attribute` had after the commit; nil when the change does not record one (a delete, an attribute
    /// an update did not change) or the entity has no such attribute.
    public func newValue(_ attribute: String) -> Value? { index(attribute).flatMap { value($0, old: false) } }

    /// Whether the change is of an object of model `type`'s entity.
    public func isOf<M: Model>(_ type: M.Type) -> Bool { ModelMetadata.of(type).entityName == entityName }

    /// The old value of the attribute `keyPath` reads, typed; nil when not recorded (see `oldValue(_:)`), when the
    /// change is of another entity, or when the key path reads no attribute.
    public func oldValue<M: Model, V: PersistentValue>(_ keyPath: KeyPath<M, V>) -> V? {
        typed(keyPath, old: true)
    }

    /// The new value of the attribute `keyPath` reads, typed; nil when not recorded (see `newValue(_:)`), when the
    /// change is of another entity, or when the key path reads no attribute.
    public func newValue<M: Model, V: PersistentValue>(_ keyPath: KeyPath<M, V>) -> V? {
        typed(keyPath, old: false)
    }

    private func typed<M: Model, V: PersistentValue>(_ keyPath: KeyPath<M, V>, old: Bool) -> V? {
        let metadata = ModelMetadata.of(M.self)
        guard metadata.entityName == entityName, let name = metadata.name(of: keyPath), let a = index(name),
            let value = value(a, old: old)
        else { return nil }
        return V(persistentValue: value)
    }
}

/// A link or unlink a commit made: `source`'s relationship `relationship` gained or lost `target` (the inverse end
/// changed with it).
public struct HistoryRelationshipChange: Sendable, Equatable {
    /// Whether the target was added or removed.
    public let kind: ChangeSet.RelationshipEdit.Kind
    /// The object whose relationship changed.
    public let source: ObjectID
    /// The relationship's name, on the source's entity.
    public let relationship: String
    /// The object linked or unlinked.
    public let target: ObjectID
}

import Observation
import TrellisCore
import TrellisGraph
import TrellisJournal

/// The Swift types a `@Relationship` can hold: an optional object (to-one) or an array of objects (to-many).
///
/// ```swift
/// @Relationship var project: Project?          // Optional<Project>: to-one
/// @Relationship var chores: [Chore]             // Array<Chore>: to-many
/// ```
public protocol RelationshipValue {
    /// The model class at the other end.
    associatedtype Target: Model
    /// Whether the relationship holds any number of targets.
    static var isToMany: Bool { get }
    /// No target: nil or the empty array.
    static var empty: Self { get }
    /// This type's value for these targets (the first, or nil, for to-one).
    init(targets: [Target])
    /// The targets, as an array.
    var targets: [Target] { get }
}

extension Optional: RelationshipValue where Wrapped: Model {
    /// The wrapped model class.
    public typealias Target = Wrapped
    /// False: an optional is a to-one relationship.
    public static var isToMany: Bool { false }
    /// Nil.
    public static var empty: Self { nil }
    /// The first target, or nil.
    public init(targets: [Wrapped]) { self = targets.first }
    /// The target as a one-element array, or empty.
    public var targets: [Wrapped] { map { [$0] } ?? [] }
}

extension Array: RelationshipValue where Element: Model {
    /// The element model class.
    public typealias Target = Element
    /// True: an array is a to-many relationship.
    public static var isToMany: Bool { true }
    /// The empty array.
    public static var empty: Self { [] }
    /// The targets, in the order given.
    public init(targets: [Element]) { self = targets }
    /// The array itself.
    public var targets: [Element] { self }
}

/// A relationship of a model class: to-one (`Target?`) or to-many (`[Target]`), with a delete rule and an inverse.
///
/// ```swift
/// final class Project: Model {
///     @Relationship(deleteRule: .cascade, inverse: \Chore.project) var chores: [Chore]
/// }
/// final class Chore: Model {
///     @Relationship var project: Project?
/// }
/// ```
///
/// Both ends are stored and kept in step: setting `chore.project` adds the chore to `project.chores`. Naming the
/// inverse on one end is enough; when neither end names it, the only relationship of the target pointing back is
/// taken, and failing that a hidden to-many inverse is made. To-many targets come back in `ObjectID` order, unless
/// the relationship is ordered (`ordered: true`): then they come back in the order the app gave them, kept through
/// saves, the journal, checkpoints and migrations. Insert, remove and move elements of an ordered array as of any
/// array (`board.cards.insert(card, at: 0)`, `board.cards.remove(at: 2)`); a target appears at most once (a repeat
/// is dropped), and setting the inverse end (`card.board = board`) appends the object at the end.
@propertyWrapper
public struct Relationship<Value: RelationshipValue>: ModelPropertyStorage {
    var value: Value
    let deleteRule: DeleteRule
    let inverse: KeyPathKey?
    let minimumCount: Int?
    let maximumCount: Int?
    let originalName: String?
    let ordered: Bool
    var slot = -1
    static var isRelationship: Bool { true }

    /// - Parameters:
    ///   - minimumCount: the fewest targets a saved object must have (1 makes a to-one relationship required); a
    ///     save that breaks it is refused with `TrellisError.Code.relationshipCount`.
    ///   - maximumCount: the most targets a saved object may have (to-many only; nil: no limit).
    ///   - originalName: the name the relationship had in the store's schema, when it was renamed.
    ///   - ordered: whether a to-many relationship keeps its targets in the order the app gives them.
    public init(
        wrappedValue: Value = .empty, deleteRule: DeleteRule = .nullify, minimumCount: Int? = nil,
        maximumCount: Int? = nil, originalName: String? = nil, ordered: Bool = false
    ) {
        self.ordered = ordered
        self.value = wrappedValue
        self.deleteRule = deleteRule
        self.inverse = nil
        self.minimumCount = minimumCount
        self.maximumCount = maximumCount
        self.originalName = originalName
    }

    /// - Parameters:
    ///   - minimumCount: the fewest targets a saved object must have (1 makes a to-one relationship required).
    ///   - maximumCount: the most targets a saved object may have (to-many only; nil: no limit).
    ///   - originalName: the name the relationship had in the store's schema, when it was renamed.
    ///   - ordered: whether a to-many relationship keeps its targets in the order the app gives them.
    public init<Inverse: RelationshipValue>(
        wrappedValue: Value = .empty, deleteRule: DeleteRule = .nullify, minimumCount: Int? = nil,
        maximumCount: Int? = nil, inverse: KeyPath<Value.Target, Inverse>, originalName: String? = nil,
        ordered: Bool = false
    ) {
        self.ordered = ordered
        self.value = wrappedValue
        self.deleteRule = deleteRule
        self.inverse = KeyPathKey(inverse)
        self.minimumCount = minimumCount
        self.maximumCount = maximumCount
        self.originalName = originalName
    }

    /// Not available: a `Model` subclass's property reads and writes through `subscript(_enclosingInstance:…)`.
    @available(*, unavailable, message: "@Relationship is only available on properties of Model subclasses")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    /// Reads register with the object's observation registrar; writes notify the observers of both ends (see
    /// `Model`).
    /// - Complexity: O(k) for k targets (each target object is looked up or made once per context).
    public static subscript<M: Model>(
        _enclosingInstance object: M,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<M, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<M, Self>
    ) -> Value {
        get {
            let ordinal = ModelMirror.ordinal(object, storageKeyPath, wrapped: wrappedKeyPath)
            if let probe = object.probe { probe.touch(ordinal) }
            object.observationRegistrar.access(object, keyPath: wrappedKeyPath)
            object.readProperties |= PropertyNotifier.bit(ordinal)
            guard let context = object.modelContext, let id = object.storedID else {
                return object[keyPath: storageKeyPath].value
            }
            let ids = context.targetIDs(id, object.binding!, ordinal)
            return Value(targets: ids.map { context.materialize($0, as: Value.Target.self) })
        }
        set {
            let ordinal = ModelMirror.ordinal(object, storageKeyPath, wrapped: wrappedKeyPath)
            guard let context = object.modelContext, let id = object.storedID else {
                object.observationRegistrar.withMutation(of: object, keyPath: wrappedKeyPath) {
                    object[keyPath: storageKeyPath].value = newValue
                }
                return
            }
            // The context notifies this end and the other ends it changes, around the edit.
            context.setTargets(id, object.binding!, ordinal, newValue.targets)
        }
    }

    func describe(name: String) -> PropertyDescription {
        .relationship(
            ModelRelationship(
                name: name, target: Value.Target.self, isToMany: Value.isToMany, isOrdered: ordered && Value.isToMany,
                deleteRule: deleteRule,
                inverse: inverse, minimumCount: minimumCount, maximumCount: maximumCount, originalName: originalName))
    }

    var unmanagedValue: TrellisCore.Value? { nil }
    var unmanagedTargets: [Model]? { value.targets }
}

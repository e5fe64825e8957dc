import Observation
import TrellisCore
import TrellisGraph
import TrellisJournal

/// The base class of typed model objects: subclass it and declare stored properties with `@Attribute` and
/// `@Relationship`; the schema is derived from those declarations when the store opens.
///
/// ```swift
/// final class Project: Model {
///     @Attribute(.unique) var name = ""
///     @Relationship(deleteRule: .cascade, inverse: \Chore.project) var chores: [Chore]
///
///     convenience init(name: String) {
///         self.init()
///         self.name = name
///     }
/// }
/// let store = try Store(models: [Project.self, Chore.self])
/// ```
///
/// Every stored property needs an initial value (it is the attribute's default). The context creates the objects it
/// fetches with `init()`, so an initializer with parameters is either a `convenience` one that calls `self.init()`,
/// or a designated one next to `required init() { super.init() }`:
///
/// ```swift
/// final class Chore: Model {
///     @Attribute var title = ""
///     init(title: String) {
///         super.init()
///         self.title = title
///     }
///     required init() { super.init() }   // not fatalError(): every fetch and `Store(models:)` call it
/// }
/// ```
///
/// An object starts unmanaged, holding its values itself. `ModelContext.insert(_:)` gives it a permanent `objectID`,
/// and from then on its properties read and write the context's view of the store. Objects belong to one context
/// and are not `Sendable`; pass `objectID`s between threads and ask the other context for `model(for:as:)`. An object
/// deleted but not yet saved keeps reading its last values.
///
/// Models are `Observable` (the Observation module's protocol, which SwiftUI follows): reading a property inside
/// `withObservationTracking` (or a SwiftUI view's body) registers it, and the observers hear when it changes, whether
/// by its setter, as the other end of a relationship edit, or by commits that reach its context: the view context
/// following the store, `refresh()`, or a `save()` that brings in other contexts' commits. Only the properties that
/// changed are notified; when another context deletes an object, all of its properties are (the store holds no
/// values for it any more), and when this context deletes it, its relationships are (it has no targets any more).
///
/// ```swift
/// withObservationTracking {
///     _ = chore.title
/// } onChange: {
///     print("the title is about to change")
/// }
/// ```
open class Model: Hashable {
    /// The context that manages this object; nil until it is inserted.
    public internal(set) var modelContext: ModelContext?
    var storedID: ObjectID?
    /// The object's entity in its context's store, set with `modelContext`.
    var binding: EntityBinding?
    /// Set only on the probe instances that map key paths to properties.
    var probe: KeyPathProbe.Recorder?
    /// Whom to tell when a property is read or changes (the Observation module's bookkeeping, one per object).
    let observationRegistrar = ObservationRegistrar()
    /// The properties ever read on this object, by ordinal (`PropertyNotifier.bit(_:)`): only they can have observers,
    /// so a context notifies only them of changes that do not come through the setters.
    var readProperties: UInt64 = 0
    /// The composite properties read or written on this object since it was managed, with their cached leaves.
    final var compositeSlots: [CompositeSlot] = []

    /// An unmanaged object with every property at its initial value; `ModelContext.insert(_:)` makes it persistent.
    public required init() {}

    /// The object's permanent identity, allocated when it is inserted into a context; nil before.
    public var objectID: ObjectID? {
        probe?.touchIdentity()
        return storedID
    }

    /// `objectID` under SwiftData's name, for code ported from it (it also works in predicates and sorts).
    public var persistentModelID: ObjectID? { objectID }

    /// Whether the object's context deleted it (and has not saved yet) or it no longer exists in the context's view.
    public var isDeleted: Bool {
        guard let context = modelContext, let id = storedID else { return false }
        return !context.exists(id)
    }

    /// Compound indexes and unique constraints over several attributes; override to declare them.
    ///
    /// ```swift
    /// override class var indexes: [ModelIndex] { [.index(\Chore.priority, \Chore.due)] }
    /// ```
    open class var indexes: [ModelIndex] { [] }

    /// The entity's name in the store's schema when the class was renamed since (Core Data's renaming identifier):
    /// opening migrates its objects, which keep their IDs.
    ///
    /// ```swift
    /// final class Memo: Model { override class var originalEntityName: String? { "Note" } }
    /// ```
    open class var originalEntityName: String? { nil }

    /// The object for people: its entity and serial once inserted (`Chore#5`, `Chore#5 (deleted)`), `Chore (not
    /// inserted)` before. `print(chore)` shows it too, unless the class is `CustomStringConvertible` itself.
    open var debugDescription: String {
        let entity = ModelMetadata.entityName(of: type(of: self))
        guard let id = storedID else { return "\(entity) (not inserted)" }
        return "\(entity)#\(id.serial)" + (isDeleted ? " (deleted)" : "")
    }

    /// Objects are equal when they are the same instance; a context hands out one instance per object.
    public static func == (lhs: Model, rhs: Model) -> Bool { lhs === rhs }

    /// Hashes the object's identity, as `==` compares it.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension Model: CustomDebugStringConvertible {}

/// Models are `Observable`: reads of their properties register with `withObservationTracking` (and SwiftUI), and
/// changes notify exactly the observers of the properties that changed (see `Model`).
extension Model: Observable {}

/// Models are `Identifiable` by their `objectID`, as SwiftData's are by `persistentModelID`.
extension Model: Identifiable {}

extension Identifiable where Self: Model {
    /// The object's `objectID`: nil until it is inserted (give unsaved objects no list of their own), then permanent.
    ///
    /// A model may declare a property of its own named `id` (`@Attribute(.unique) var id = UUID()`): `model.id` is
    /// then that property, and `Identifiable` code (SwiftUI's `ForEach`, `Identifiable.ID`) still uses `objectID`.
    public var id: ObjectID? { objectID }
}

/// An index or unique constraint over one or several attributes of a model, named by key paths.
///
/// ```swift
/// override class var indexes: [ModelIndex] { [.unique(\Chore.project, \Chore.title)] }   // not on relationships
/// override class var indexes: [ModelIndex] { [.index(\Chore.priority, \Chore.due)] }
/// ```
public struct ModelIndex: Sendable {
    let keyPaths: [KeyPathKey]
    let isUnique: Bool

    /// An ordered index over the attributes, in this order.
    public static func index<M: Model>(_ keyPaths: PartialKeyPath<M>...) -> ModelIndex {
        ModelIndex(keyPaths: keyPaths.map(KeyPathKey.init), isUnique: false)
    }

    /// A unique constraint (and ordered index) over the attributes, in this order.
    public static func unique<M: Model>(_ keyPaths: PartialKeyPath<M>...) -> ModelIndex {
        ModelIndex(keyPaths: keyPaths.map(KeyPathKey.init), isUnique: true)
    }
}

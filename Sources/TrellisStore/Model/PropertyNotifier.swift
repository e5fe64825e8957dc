import Observation
import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// Tells the observers of one property of model objects that it changes, through the typed key path its getter
/// registers with `ObservationRegistrar.access` (observers are found by that key path, so no other one would do).
///
/// The wrappers record one per class and property the first time a property is read or written on an object of that
/// class (`ModelMirror.ordinal`); a property never read on any object of its class has no observers to tell. A
/// context notifies through them when a change reaches its objects by some other way than their setters: commits it
/// moves to, the other end of a relationship edit, a delete, a rollback, a child context's save.
struct PropertyNotifier: @unchecked Sendable {
    /// The property's ordinal in its class.
    let ordinal: Int
    let isRelationship: Bool
    // Unchecked: the closure captures only a key path naming a stored property, which is immutable.
    private let notify: (Model, Phase) -> Void

    private enum Phase { case willSet, didSet }

    init<M: Model, V>(_ keyPath: ReferenceWritableKeyPath<M, V>, ordinal: Int, isRelationship: Bool) {
        self.ordinal = ordinal
        self.isRelationship = isRelationship
        notify = { object, phase in
            guard let object = object as? M else { return }
            switch phase {
            case .willSet: object.observationRegistrar.willSet(object, keyPath: keyPath)
            case .didSet: object.observationRegistrar.didSet(object, keyPath: keyPath)
            }
        }
    }

    func willSet(_ object: Model) { notify(object, .willSet) }
    func didSet(_ object: Model) { notify(object, .didSet) }

    /// Whether the property was ever read on `object` (if not, it has no observers there).
    func wasRead(on object: Model) -> Bool { object.readProperties & Self.bit(ordinal) != 0 }

    /// The bit of `Model.readProperties` for a property: its own below ordinal 63, one shared by the others.
    @inline(__always) static func bit(_ ordinal: Int) -> UInt64 { ordinal < 63 ? 1 << UInt64(ordinal) : 1 << 63 }

    /// Per model class (the object's dynamic class), the notifiers recorded so far.
    private static let recorded = Mutex<[ObjectIdentifier: ClassNotifiers]>([:])

    static func record(_ notifier: PropertyNotifier, for type: Model.Type) {
        recorded.locked { $0[ObjectIdentifier(type), default: ClassNotifiers()].add(notifier) }
    }

    /// The notifiers recorded for a class so far.
    /// - Complexity: O(1).
    static func recorded(for type: Model.Type) -> ClassNotifiers {
        recorded.locked { $0[ObjectIdentifier(type)] ?? ClassNotifiers() }
    }
}

/// The notifiers recorded for one model class: by ordinal, and all of them and the relationships' in ordinal order
/// (arranged when one is recorded, which happens once per class and property).
struct ClassNotifiers: Sendable {
    private(set) var byOrdinal: [Int: PropertyNotifier] = [:]
    private(set) var all: [PropertyNotifier] = []
    private(set) var relationships: [PropertyNotifier] = []

    mutating func add(_ notifier: PropertyNotifier) {
        byOrdinal[notifier.ordinal] = notifier
        all = byOrdinal.values.sorted { $0.ordinal < $1.ordinal }
        relationships = all.filter(\.isRelationship)
    }
}

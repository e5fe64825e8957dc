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
    // Unchecked: the closure captures only a key path naming a stored property, which is immutable.
    private let notify: (Model, Phase) -> Void

    private enum Phase { case willSet, didSet }

    init<M: Model, V>(_ keyPath: ReferenceWritableKeyPath<M, V>) {
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

    /// Per model class (the object's dynamic class), the notifier of each property by ordinal.
    private static let recorded = Mutex<[ObjectIdentifier: [Int: PropertyNotifier]]>([:])

    static func record(_ notifier: PropertyNotifier, for type: Model.Type, ordinal: Int) {
        recorded.locked { $0[ObjectIdentifier(type), default: [:]][ordinal] = notifier }
    }

    /// The notifiers recorded for a class so far, by ordinal.
    static func recorded(for type: Model.Type) -> [Int: PropertyNotifier] {
        recorded.locked { $0[ObjectIdentifier(type)] ?? [:] }
    }
}

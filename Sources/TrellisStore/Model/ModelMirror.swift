import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// Walks the wrapped properties of a model object with `Mirror`.
enum ModelMirror {
    /// The storage of every wrapped property, by ordinal, with its property name.
    static func properties(of object: Model) -> [(name: String, storage: any ModelPropertyStorage)] {
        var chain: [Mirror] = []
        var mirror: Mirror? = Mirror(reflecting: object)
        // Model's own bookkeeping fields hold no wrapped properties: stop before reflecting them.
        while let m = mirror, m.subjectType != Model.self {
            chain.append(m)
            mirror = m.superclassMirror
        }
        var out: [(name: String, storage: any ModelPropertyStorage)] = []
        for m in chain.reversed() {
            for child in m.children {
                guard let storage = child.value as? any ModelPropertyStorage, let label = child.label else { continue }
                out.append((label.hasPrefix("_") ? String(label.dropFirst()) : label, storage))
            }
        }
        return out
    }

    /// The ordinal of the property whose storage `keyPath` reaches, cached per key path and class.
    ///
    /// The first time a key path is seen on a class, its storage is marked and the object mirrored to find which
    /// child carries the mark (`#function` and key paths do not give property names, `Mirror` labels do), and the
    /// property's `PropertyNotifier` is recorded for the class with `wrapped`, the key path its getter observes.
    static func ordinal<M: Model, S: ModelPropertyStorage, V>(
        _ object: M, _ keyPath: ReferenceWritableKeyPath<M, S>, wrapped: ReferenceWritableKeyPath<M, V>
    ) -> Int {
        let cached = object[keyPath: keyPath].slot
        if cached >= 0 { return cached }
        // A wrapper's key path is one object per declaration site, so its identity usually finds the ordinal without
        // hashing the key path; the entry keeps the key path alive, so no other key path can take its address.
        let fast = FastKey(keyPath: ObjectIdentifier(keyPath), type: ObjectIdentifier(Swift.type(of: object)))
        if let known = fastCache.locked({ $0[fast] }), known.keyPath.keyPath === keyPath {
            object[keyPath: keyPath].slot = known.ordinal
            return known.ordinal
        }
        let key = SlotKey(keyPath: KeyPathKey(keyPath), type: ObjectIdentifier(Swift.type(of: object)))
        if let known = slotCache.locked({ $0[key] }) {
            object[keyPath: keyPath].slot = known
            fastCache.locked { $0[fast] = (KeyPathKey(keyPath), known) }
            return known
        }
        object[keyPath: keyPath].slot = marker
        guard let ordinal = properties(of: object).firstIndex(where: { $0.storage.slot == marker }) else {
            preconditionFailure("Trellis: a wrapped property of \(M.self) is not visible to Mirror")
        }
        object[keyPath: keyPath].slot = ordinal
        // Recorded before the cache entry, so that whoever finds the entry finds the notifier too.
        let notifier = PropertyNotifier(wrapped, ordinal: ordinal, isRelationship: S.isRelationship)
        PropertyNotifier.record(notifier, for: Swift.type(of: object))
        slotCache.locked { $0[key] = ordinal }
        return ordinal
    }

    /// A storage key path on objects of one dynamic class: a subclass's objects reach an inherited property through
    /// the superclass's key path, and each class records its own notifiers.
    private struct SlotKey: Hashable, Sendable {
        let keyPath: KeyPathKey
        let type: ObjectIdentifier
    }

    /// A storage key path by identity, on objects of one dynamic class.
    private struct FastKey: Hashable, Sendable {
        let keyPath: ObjectIdentifier
        let type: ObjectIdentifier
    }

    private static let marker = Int.min
    private static let slotCache = Mutex<[SlotKey: Int]>([:])
    private static let fastCache = Mutex<[FastKey: (keyPath: KeyPathKey, ordinal: Int)]>([:])
}

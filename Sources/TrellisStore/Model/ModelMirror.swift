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

    /// The ordinal of the property whose storage `keyPath` reaches, cached per key path.
    ///
    /// The first time a key path is seen, its storage is marked and the object mirrored to find which child carries
    /// the mark; `#function` and key paths do not give property names, `Mirror` labels do.
    static func ordinal<M: Model, S: ModelPropertyStorage>(
        _ object: M, _ keyPath: ReferenceWritableKeyPath<M, S>
    ) -> Int {
        let cached = object[keyPath: keyPath].slot
        if cached >= 0 { return cached }
        let key = KeyPathKey(keyPath)
        if let known = slotCache.locked({ $0[key] }) {
            object[keyPath: keyPath].slot = known
            return known
        }
        object[keyPath: keyPath].slot = marker
        guard let ordinal = properties(of: object).firstIndex(where: { $0.storage.slot == marker }) else {
            preconditionFailure("Trellis: a wrapped property of \(M.self) is not visible to Mirror")
        }
        object[keyPath: keyPath].slot = ordinal
        slotCache.locked { $0[key] = ordinal }
        return ordinal
    }

    private static let marker = Int.min
    private static let slotCache = Mutex<[KeyPathKey: Int]>([:])
}

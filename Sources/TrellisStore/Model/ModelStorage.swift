import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// What the `@Attribute` and `@Relationship` wrappers store inside a model object, seen without their generic types.
///
/// A property's *ordinal* is its position among the wrapped properties of its class, superclass properties first, in
/// declaration order (the order `Mirror` lists them). Storage caches its ordinal in `slot` once it is known.
protocol ModelPropertyStorage {
    /// The property's ordinal, or -1 while unknown.
    var slot: Int { get set }
    /// The schema description of the property (its name comes from the storage's label).
    func describe(name: String) -> PropertyDescription
    /// For an attribute of an unmanaged object: the value it holds.
    var unmanagedValue: Value? { get }
    /// For a relationship of an unmanaged object: the objects it holds.
    var unmanagedTargets: [Model]? { get }
}

/// One wrapped property of a model class, as the schema derivation needs it.
enum PropertyDescription: Sendable {
    case attribute(AttributeDescription, unique: Bool, indexed: Bool)
    case relationship(ModelRelationship)
}

/// A declared relationship before its inverse is paired.
struct ModelRelationship: Sendable {
    var name: String
    var target: Model.Type
    var isToMany: Bool
    var deleteRule: DeleteRule
    /// The key path on the target that the declaration names as its inverse.
    var inverse: KeyPathKey?
    var originalName: String?
}

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
        if let known = slotCache.withLock({ $0[key] }) {
            object[keyPath: keyPath].slot = known
            return known
        }
        object[keyPath: keyPath].slot = marker
        guard let ordinal = properties(of: object).firstIndex(where: { $0.storage.slot == marker }) else {
            preconditionFailure("Trellis: a wrapped property of \(M.self) is not visible to Mirror")
        }
        object[keyPath: keyPath].slot = ordinal
        slotCache.withLock { $0[key] = ordinal }
        return ordinal
    }

    private static let marker = Int.min
    private static let slotCache = Mutex<[KeyPathKey: Int]>([:])
}

@_spi(Reflection) import Swift
import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// Walks the wrapped properties of a model object: at their field offsets, found once per class, or with `Mirror`.
enum ModelMirror {
    /// The storage of every wrapped property, by ordinal, with its property name.
    ///
    /// Read at the fields' offsets, found once per class: reflecting the object with `Mirror` every time (as an
    /// insert asks) boxes and casts every child. A class whose fields the runtime cannot list is reflected.
    static func properties(of object: Model) -> [(name: String, storage: any ModelPropertyStorage)] {
        guard let fields = storedFields(of: object) else { return reflected(object) }
        return withExtendedLifetime(object) {
            let base = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
            return fields.map { field in (field.name, field.type.load(from: base + field.offset)) }
        }
    }

    /// A wrapped property's storage field: its name (without the underscore), offset and type.
    private struct StoredField: @unchecked Sendable {
        // Unchecked: a metatype, immutable.
        let name: String
        let offset: Int
        let type: any ModelPropertyStorage.Type
    }

    /// `_EachFieldOptions.classType` (a `static var` there, so not readable in Swift 6 mode).
    private static let classType = _EachFieldOptions(rawValue: 1 << 0)

    private static let fieldCache = Mutex<[ObjectIdentifier: [StoredField]?]>([:])

    /// The storage fields of the object's class (superclass fields first, in declaration order), or nil when the
    /// runtime cannot list them or they are not the ones `Mirror` finds on the object.
    private static func storedFields(of object: Model) -> [StoredField]? {
        let type = Swift.type(of: object)
        let key = ObjectIdentifier(type)
        if let known = fieldCache.locked({ $0[key] }) { return known }
        var fields: [StoredField] = []
        let listed = _forEachField(of: type, options: classType) { name, offset, fieldType, _ in
            if let storage = fieldType as? any ModelPropertyStorage.Type {
                let label = String(cString: name)
                fields.append(
                    StoredField(
                        name: label.hasPrefix("_") ? String(label.dropFirst()) : label, offset: offset, type: storage))
            }
            return true
        }
        // Checked once against `Mirror`: same names, same order, same types.
        let mirrored = reflected(object)
        let agrees =
            listed && fields.map(\.name) == mirrored.map(\.name)
            && zip(fields, mirrored).allSatisfy {
                ObjectIdentifier($0.type) == ObjectIdentifier(Swift.type(of: $1.storage))
            }
        let result = agrees ? fields : nil
        fieldCache.locked { _ = $0.updateValue(result, forKey: key) }
        return result
    }

    /// The storages found by reflecting the object with `Mirror`.
    private static func reflected(_ object: Model) -> [(name: String, storage: any ModelPropertyStorage)] {
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
        ordinal(object, keyPath, wrapped: wrapped, slot: object[keyPath: keyPath].slot)
    }

    /// `ordinal(_:_:wrapped:)` for a caller that has read the storage's `slot` already.
    static func ordinal<M: Model, S: ModelPropertyStorage, V>(
        _ object: M, _ keyPath: ReferenceWritableKeyPath<M, S>, wrapped: ReferenceWritableKeyPath<M, V>, slot: Int
    ) -> Int {
        if slot >= 0 { return slot }
        // A wrapper's key path is one object per declaration site, so its identity usually finds the ordinal without
        // hashing the key path; the entry keeps the key path alive, so no other key path can take its address. The
        // ordinal is not written back to the storage: that write through the key path costs more than this lookup.
        let fast = FastKey(keyPath: ObjectIdentifier(keyPath), type: ObjectIdentifier(Swift.type(of: object)))
        if let known = fastCache.locked({ $0[fast] }), known.keyPath.keyPath === keyPath { return known.ordinal }
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

import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// Maps key paths on model classes (from predicates, sort descriptors, inverses and indexes) to the properties they
/// read, by touching them on a probe object and recording which wrapper answered.
enum KeyPathProbe {
    /// What a key path reads.
    enum Target: Sendable, Equatable {
        /// The wrapped property with this ordinal.
        case property(Int)
        /// `Model.objectID`.
        case identity
        /// One leaf (by its position in `CompositeShape` order) of the composite attribute with this ordinal.
        case leaf(Int, Int)
    }

    /// Collects what a probe object's properties were asked for.
    final class Recorder {
        private(set) var touched: Target?
        /// The value leaves of the composite first touched, to try one by one.
        private(set) var leaves: [Int] = []
        /// The leaf a composite's probe value holds its alternate value in.
        var variant: Int?

        func touch(_ ordinal: Int, leaves: [Int] = []) {
            if touched == nil {
                touched = .property(ordinal)
                self.leaves = leaves
            }
        }

        func touchIdentity() {
            if touched == nil { touched = .identity }
        }
    }

    private static let cache = Mutex<[KeyPathKey: Target]>([:])

    /// What the first component of `keyPath` reads on objects of `type`, or nil when it is no wrapped property and
    /// not `objectID` (a computed property of the user's own, for example).
    /// - Complexity: O(1) after the first call for a key path.
    static func resolve(_ keyPath: AnyKeyPath, on type: Model.Type) -> Target? {
        let key = KeyPathKey(keyPath)
        if let known = cache.locked({ $0[key] }) { return known }
        let probe = type.init()
        let recorder = Recorder()
        probe.probe = recorder
        let base = probe[keyPath: keyPath] as Any
        guard var target = recorder.touched else { return nil }
        if case .property(let ordinal) = target, !recorder.leaves.isEmpty {
            // A key path into a composite reads the one leaf whose alternate value changes what it reads.
            var hits: [Int] = []
            for leaf in recorder.leaves {
                recorder.variant = leaf
                if !same(probe[keyPath: keyPath] as Any, base) { hits.append(leaf) }
            }
            if hits.count == 1 { target = .leaf(ordinal, hits[0]) }
        }
        cache.locked { $0[key] = target }
        return target
    }

    private static func same(_ a: Any, _ b: Any) -> Bool {
        if let x = a as? any PersistentValue, let y = b as? any PersistentValue {
            return x.persistentValue == y.persistentValue
        }
        return String(describing: a) == String(describing: b)
    }
}

/// A key path as a cache key or a stored description.
///
/// Key paths are immutable. The standard library leaves them non-`Sendable` because a subscript component may capture
/// non-`Sendable` arguments; the key paths Trellis keeps name properties of model classes and capture nothing.
struct KeyPathKey: Hashable, @unchecked Sendable {
    let keyPath: AnyKeyPath

    init(_ keyPath: AnyKeyPath) { self.keyPath = keyPath }
}

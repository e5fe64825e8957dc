import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// What a model class declares: its entity name and its wrapped properties by ordinal. Built once per class from
/// `Mirror` on a fresh instance.
final class ModelMetadata: Sendable {
    let type: Model.Type
    let entityName: String
    let names: [String]
    let properties: [PropertyDescription]
    private let ordinals: [String: Int]

    private init(_ type: Model.Type) {
        self.type = type
        self.entityName = Self.entityName(of: type)
        let wrapped = ModelMirror.properties(of: type.init())
        self.names = wrapped.map(\.name)
        self.properties = wrapped.map { $0.storage.describe(name: $0.name) }
        self.ordinals = Dictionary(wrapped.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// The class's name without its module: `Chore`.
    static func entityName(of type: Model.Type) -> String {
        String(describing: type)
    }

    func ordinal(named name: String) -> Int? { ordinals[name] }

    /// The name of the property that `keyPath` reads, for error messages and dictionaries.
    func name(of keyPath: AnyKeyPath) -> String? {
        switch KeyPathProbe.resolve(keyPath, on: type) {
        case .property(let o)?: return names[o]
        case .leaf(let o, let leaf)?:
            guard case .composite(let leaves) = properties[o] else { return nil }
            return leaves[leaf].name
        default: return nil
        }
    }

    private static let registry = Mutex<[ObjectIdentifier: ModelMetadata]>([:])

    /// The metadata of a model class, built on first use.
    /// - Complexity: O(1) after the first call for a class.
    static func of(_ type: Model.Type) -> ModelMetadata {
        let key = ObjectIdentifier(type)
        if let known = registry.locked({ $0[key] }) { return known }
        // Built outside the lock: making the instance runs the user's initializer.
        let built = ModelMetadata(type)
        return registry.locked { r in
            if let raced = r[key] { return raced }
            r[key] = built
            return built
        }
    }
}

import TrellisCore
import TrellisGraph
import TrellisJournal

/// An option of an `@Attribute`.
///
/// ```swift
/// @Attribute(.unique) var email = ""
/// @Attribute(.indexed) var due = Date.distantFuture
/// ```
public struct AttributeOption: Hashable, Sendable {
    let rawValue: Int

    /// No two objects of the entity may hold the same non-null value; the attribute is indexed too.
    public static let unique = AttributeOption(rawValue: 1)
    /// The attribute has an ordered index: equality, range and `IN` predicates and sorts on it use it.
    public static let indexed = AttributeOption(rawValue: 2)
}

/// A stored attribute of a model class; its initial value is the attribute's default.
///
/// ```swift
/// final class Chore: Model {
///     @Attribute var title = ""
///     @Attribute(.indexed) var due = Date.distantFuture
///     @Attribute var note: String?            // optional: may be nil
/// }
/// ```
///
/// On an unmanaged object the wrapper holds the value; once the object is inserted, reads and writes go to its
/// context (pending changes over the context's snapshot).
@propertyWrapper
public struct Attribute<Value: PersistentValue>: ModelPropertyStorage {
    var value: Value
    let options: Set<AttributeOption>
    /// The name the attribute had in the store's schema when it was renamed: opening migrates its values.
    let originalName: String?
    var slot = -1

    /// An attribute with an initial value (the default for new objects) and options such as `.unique` or `.indexed`.
    public init(wrappedValue: Value, _ options: AttributeOption...) {
        self.value = wrappedValue
        self.options = Set(options)
        self.originalName = nil
    }

    /// An attribute renamed since the store was written, as SwiftData's `@Attribute(originalName:)`:
    /// `@Attribute(originalName: "title") var headline = ""`. The store's values move to the new name.
    public init(wrappedValue: Value, _ options: AttributeOption..., originalName: String) {
        self.value = wrappedValue
        self.options = Set(options)
        self.originalName = originalName
    }

    /// An optional attribute without an initial value starts as nil.
    public init() where Value: ExpressibleByNilLiteral {
        self.value = nil
        self.options = []
        self.originalName = nil
    }

    /// An optional attribute without an initial value starts as nil.
    public init(_ options: AttributeOption...) where Value: ExpressibleByNilLiteral {
        self.value = nil
        self.options = Set(options)
        self.originalName = nil
    }

    /// An optional attribute renamed since the store was written.
    public init(_ options: AttributeOption..., originalName: String) where Value: ExpressibleByNilLiteral {
        self.value = nil
        self.options = Set(options)
        self.originalName = originalName
    }

    /// Not available: a `Model` subclass's property reads and writes through `subscript(_enclosingInstance:…)`.
    @available(*, unavailable, message: "@Attribute is only available on properties of Model subclasses")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    /// - Complexity: O(1) for an unmanaged object; a few hash lookups for a managed one.
    public static subscript<M: Model>(
        _enclosingInstance object: M,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<M, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<M, Self>
    ) -> Value {
        get {
            let ordinal = ModelMirror.ordinal(object, storageKeyPath)
            if let probe = object.probe { probe.touch(ordinal) }
            guard let context = object.modelContext, let id = object.storedID,
                let stored = context.attributeValue(id, object.binding!, ordinal)
            else { return object[keyPath: storageKeyPath].value }
            guard let value = Value(persistentValue: stored) else {
                preconditionFailure("Trellis: \(M.self) holds \(stored), which is not a \(Value.self)")
            }
            return value
        }
        set {
            let ordinal = ModelMirror.ordinal(object, storageKeyPath)
            guard let context = object.modelContext, let id = object.storedID else {
                object[keyPath: storageKeyPath].value = newValue
                return
            }
            context.setAttributeValue(id, object.binding!, ordinal, newValue.persistentValue)
        }
    }

    func describe(name: String) -> PropertyDescription {
        let description = AttributeDescription(
            name, Value.attributeType, optional: Value.isOptional, default: value.persistentValue,
            originalName: originalName)
        return .attribute(description, unique: options.contains(.unique), indexed: options.contains(.indexed))
    }

    var unmanagedValue: TrellisCore.Value? { value.persistentValue }
    var unmanagedTargets: [Model]? { nil }
}

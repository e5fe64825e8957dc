import Observation
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
/// enum Priority: String { case low, high }
///
/// final class Chore: Model {
///     @Attribute var title = ""
///     @Attribute(.indexed) var due = Date.distantFuture
///     @Attribute var note: String?            // optional: may be nil
///     @Attribute var priority = Priority.low  // an enum: its raw value is stored
/// }
/// ```
///
/// An attribute holds a `PersistentValue` (the scalar types, and optionals of them) or an enum, or other
/// `RawRepresentable` type, whose raw value is one (optional too); the raw value is what is stored, queried and sorted
/// on. On an unmanaged object the wrapper holds the value; once the object is inserted, reads and writes go to its
/// context (pending changes over the context's snapshot).
@propertyWrapper
public struct Attribute<Value>: ModelPropertyStorage {
    var value: Value
    let options: Set<AttributeOption>
    /// The name the attribute had in the store's schema when it was renamed: opening migrates its values.
    let originalName: String?
    var slot = -1
    static var isRelationship: Bool { false }
    /// How the value converts to and from what the store holds, picked by the initializer from `Value`'s type; nil
    /// for a composite.
    let codec: (any AttributeCodec<Value>.Type)?
    /// How a composite converts to and from its leaf columns; nil for a scalar.
    let composite: (any CompositeCodec<Value>.Type)?

    /// An attribute with an initial value (the default for new objects) and options such as `.unique` or `.indexed`.
    public init(wrappedValue: Value, _ options: AttributeOption...) where Value: PersistentValue {
        self.init(wrappedValue, options, nil, PersistentCodec<Value>.self)
    }

    /// An attribute renamed since the store was written, as SwiftData's `@Attribute(originalName:)`:
    /// `@Attribute(originalName: "title") var headline = ""`. The store's values move to the new name.
    public init(wrappedValue: Value, _ options: AttributeOption..., originalName: String) where Value: PersistentValue {
        self.init(wrappedValue, options, originalName, PersistentCodec<Value>.self)
    }

    /// An optional attribute without an initial value starts as nil.
    public init() where Value: PersistentValue & ExpressibleByNilLiteral {
        self.init(nil, [], nil, PersistentCodec<Value>.self)
    }

    /// An optional attribute without an initial value starts as nil.
    public init(_ options: AttributeOption...) where Value: PersistentValue & ExpressibleByNilLiteral {
        self.init(nil, options, nil, PersistentCodec<Value>.self)
    }

    /// An optional attribute renamed since the store was written.
    public init(_ options: AttributeOption..., originalName: String)
    where Value: PersistentValue & ExpressibleByNilLiteral {
        self.init(nil, options, originalName, PersistentCodec<Value>.self)
    }

    /// An attribute holding an enum (or another `RawRepresentable` type) whose raw value is a `PersistentValue`: the
    /// raw value is stored, and the attribute has its type. `enum Priority: String { case low, high }` needs no
    /// other conformance: `@Attribute var priority = Priority.low`.
    ///
    /// A type that is `PersistentValue` itself uses its own conversion instead.
    @_disfavoredOverload
    public init(wrappedValue: Value, _ options: AttributeOption..., originalName: String? = nil)
    where Value: RawRepresentable, Value.RawValue: PersistentValue {
        self.init(wrappedValue, options, originalName, RawValueCodec<Value>.self)
    }

    /// An optional attribute holding an enum whose raw value is a `PersistentValue`: nil is stored as null.
    /// `@Attribute var priority: Priority? = .low`.
    @_disfavoredOverload
    public init<Wrapped>(wrappedValue: Wrapped?, _ options: AttributeOption..., originalName: String? = nil)
    where Value == Wrapped?, Wrapped: RawRepresentable, Wrapped.RawValue: PersistentValue {
        self.init(wrappedValue, options, originalName, OptionalRawValueCodec<Wrapped>.self)
    }

    /// An optional enum attribute without an initial value starts as nil: `@Attribute var priority: Priority?`.
    @_disfavoredOverload
    public init<Wrapped>(_ options: AttributeOption..., originalName: String? = nil)
    where Value == Wrapped?, Wrapped: RawRepresentable, Wrapped.RawValue: PersistentValue {
        self.init(nil, options, originalName, OptionalRawValueCodec<Wrapped>.self)
    }

    /// A composite attribute: a `Codable` struct whose fields (scalar types, optionals of them, nested structs,
    /// optional nested structs) are stored as one column each, named by their paths (`address.city`). Predicates,
    /// sorts and indexes reach the fields by key path: `#Predicate<Person> { $0.address.city == "Lyon" }`,
    /// `SortDescriptor(\Person.address.zip)`, `.index(\Person.address.city)`. The initial value's fields are the
    /// columns' defaults.
    @_disfavoredOverload
    public init(wrappedValue: Value) where Value: Codable {
        self.init(wrappedValue, [], nil, nil, CodableCompositeCodec<Value>.self)
    }

    /// An optional composite attribute without an initial value starts as nil; a presence column named after the
    /// attribute says whether it holds a value.
    @_disfavoredOverload
    public init<Wrapped>() where Value == Wrapped?, Wrapped: Codable {
        self.init(nil, [], nil, nil, CodableCompositeCodec<Value>.self)
    }

    /// A `Codable` enum is stored by its raw value, not as a composite (this overload only settles the choice).
    @_disfavoredOverload
    public init(wrappedValue: Value) where Value: RawRepresentable & Codable, Value.RawValue: PersistentValue {
        self.init(wrappedValue, [], nil, RawValueCodec<Value>.self)
    }

    /// An optional `Codable` enum is stored by its raw value, not as a composite.
    @_disfavoredOverload
    public init<Wrapped>(wrappedValue: Wrapped?)
    where Value == Wrapped?, Wrapped: RawRepresentable & Codable, Wrapped.RawValue: PersistentValue {
        self.init(wrappedValue, [], nil, OptionalRawValueCodec<Wrapped>.self)
    }

    /// An optional `Codable` enum without an initial value starts as nil and is stored by its raw value.
    @_disfavoredOverload
    public init<Wrapped>()
    where Value == Wrapped?, Wrapped: RawRepresentable & Codable, Wrapped.RawValue: PersistentValue {
        self.init(nil, [], nil, OptionalRawValueCodec<Wrapped>.self)
    }

    private init(
        _ value: Value, _ options: [AttributeOption], _ originalName: String?, _ codec: any AttributeCodec<Value>.Type
    ) {
        self.init(value, options, originalName, codec, nil)
    }

    private init(
        _ value: Value, _ options: [AttributeOption], _ originalName: String?,
        _ codec: (any AttributeCodec<Value>.Type)?, _ composite: (any CompositeCodec<Value>.Type)?
    ) {
        self.value = value
        self.options = Set(options)
        self.originalName = originalName
        self.codec = codec
        self.composite = composite
    }

    /// Not available: a `Model` subclass's property reads and writes through `subscript(_enclosingInstance:…)`.
    @available(*, unavailable, message: "@Attribute is only available on properties of Model subclasses")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    /// Reads register with the object's observation registrar; writes notify its observers (see `Model`).
    /// - Complexity: O(1) for an unmanaged object; a few hash lookups for a managed one.
    public static subscript<M: Model>(
        _enclosingInstance object: M,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<M, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<M, Self>
    ) -> Value {
        get {
            // A managed composite read or written before: its slot gives the ordinal and the cached leaves, with no
            // read of the storage through the key path.
            if object.probe == nil, let context = object.modelContext, let id = object.storedID,
                let slot = context.compositeSlot(object, wrappedKeyPath)
            {
                object.observationRegistrar.access(object, keyPath: wrappedKeyPath)
                object.readProperties |= PropertyNotifier.bit(slot.property.ordinal)
                return slotValue(object, context, id, slot, storageKeyPath)
            }
            return read(object, wrappedKeyPath, storageKeyPath)
        }
        set {
            // A managed composite read or written before: its slot, with no read of the storage.
            if let context = object.modelContext, let id = object.storedID,
                let slot = context.compositeSlot(object, wrappedKeyPath)
            {
                object.observationRegistrar.withMutation(of: object, keyPath: wrappedKeyPath) {
                    context.setCompositeValue(id, slot, newValue)
                }
                return
            }
            write(object, wrappedKeyPath, storageKeyPath, newValue)
        }
        _modify {
            if object.probe == nil, let context = object.modelContext, let id = object.storedID,
                let (property, slot) = context.compositeProperty(object, wrappedKeyPath)
            {
                object.observationRegistrar.access(object, keyPath: wrappedKeyPath)
                object.readProperties |= PropertyNotifier.bit(property.ordinal)
                if let direct = property.direct {
                    // `object.composite.field += 1` on a flat composite: its fields read in place (from the slot's
                    // leaves, or the row of an object the context has not touched, with no slot made), and the change
                    // found by comparing the fields before and after. Both values live in the context's scratch
                    // buffer (a temporary allocation of a generic type costs a metadata lookup, a heap one a malloc).
                    let bytes = MemoryLayout<Value>.stride * 2
                    let scratch = MemoryLayout<Value>.alignment <= 16 ? context.takeScratch(bytes: bytes) : nil
                    let raw =
                        scratch
                        ?? UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: MemoryLayout<Value>.alignment)
                    defer { scratch == nil ? raw.deallocate() : context.giveBackScratch() }
                    let pair = raw.bindMemory(to: Value.self, capacity: 2)
                    if context.directCompositeValue(id, property, slot, direct, into: raw) {
                        (pair + 1).initialize(to: pair.pointee)
                        object.observationRegistrar.willSet(object, keyPath: wrappedKeyPath)
                        defer {
                            context.setDirectCompositeValue(
                                id, property, slot, direct, old: UnsafeRawPointer(pair), new: UnsafeRawPointer(pair + 1)
                            )
                            pair.deinitialize(count: 2)
                            object.observationRegistrar.didSet(object, keyPath: wrappedKeyPath)
                        }
                        yield &(pair + 1).pointee
                        return
                    }
                }
                // Otherwise one read and one write through the object's slot, observers hearing as from `set`.
                let slot = slot ?? context.makeSlot(object, property)
                var value = slotValue(object, context, id, slot, storageKeyPath)
                object.observationRegistrar.willSet(object, keyPath: wrappedKeyPath)
                defer {
                    context.setCompositeValue(id, slot, value)
                    object.observationRegistrar.didSet(object, keyPath: wrappedKeyPath)
                }
                yield &value
                return
            }
            var value = self[_enclosingInstance: object, wrapped: wrappedKeyPath, storage: storageKeyPath]
            defer { self[_enclosingInstance: object, wrapped: wrappedKeyPath, storage: storageKeyPath] = value }
            yield &value
        }
    }

    /// A managed composite's value through its slot; what the storage holds when nothing holds the object any more.
    private static func slotValue<M: Model>(
        _ object: M, _ context: ModelContext, _ id: ObjectID, _ slot: CompositeSlot,
        _ storageKeyPath: ReferenceWritableKeyPath<M, Self>
    ) -> Value {
        withUnsafeTemporaryAllocation(of: Value.self, capacity: 1) { buffer in
            let pointer = buffer.baseAddress!
            guard context.compositeValue(id, slot, into: pointer) else { return storedValue(object, storageKeyPath) }
            return pointer.move()
        }
    }

    /// The value the storage holds (what an object that nothing holds any more reads).
    @inline(never)
    private static func storedValue<M: Model>(
        _ object: M, _ storageKeyPath: ReferenceWritableKeyPath<M, Self>
    )
        -> Value
    {
        object[keyPath: storageKeyPath].value
    }

    /// The getter's path through the storage: unmanaged objects, probes, scalars, a composite's first read. Kept out
    /// of line: the storage's type is needed only here.
    @inline(never)
    private static func read<M: Model>(
        _ object: M, _ wrappedKeyPath: ReferenceWritableKeyPath<M, Value>,
        _ storageKeyPath: ReferenceWritableKeyPath<M, Self>
    ) -> Value {
        // One read of the storage (a key path projection copies it whole) serves the ordinal and the codec.
        let storage = object[keyPath: storageKeyPath]
        let ordinal = ModelMirror.ordinal(object, storageKeyPath, wrapped: wrappedKeyPath, slot: storage.slot)
        if let probe = object.probe {
            if let composite = storage.composite, let shape = try? composite.shape.get() {
                // Key paths into a composite are told apart by which leaf changes what they read.
                probe.touch(ordinal, leaves: shape.valueLeaves)
                if let value = composite.value(of: shape.probeLeaves(variant: probe.variant)) { return value }
            } else {
                probe.touch(ordinal)
            }
        }
        object.observationRegistrar.access(object, keyPath: wrappedKeyPath)
        object.readProperties |= PropertyNotifier.bit(ordinal)
        guard let context = object.modelContext, let id = object.storedID else { return storage.value }
        if let composite = storage.composite {
            let slot = context.makeCompositeSlot(object, wrappedKeyPath, ordinal: ordinal, codec: composite)
            return withUnsafeTemporaryAllocation(of: Value.self, capacity: 1) { buffer in
                let pointer = buffer.baseAddress!
                return context.compositeValue(id, slot, into: pointer) ? pointer.move() : storage.value
            }
        }
        guard let stored = context.attributeValue(id, object.binding!, ordinal) else { return storage.value }
        guard let value = storage.codec!.value(of: stored) else {
            preconditionFailure("Trellis: \(M.self) holds \(stored), which is not a \(Value.self)")
        }
        return value
    }

    /// The setter's path through the storage: unmanaged objects, scalars, a composite's first write.
    @inline(never)
    private static func write<M: Model>(
        _ object: M, _ wrappedKeyPath: ReferenceWritableKeyPath<M, Value>,
        _ storageKeyPath: ReferenceWritableKeyPath<M, Self>, _ newValue: Value
    ) {
        guard let context = object.modelContext, let id = object.storedID else {
            _ = ModelMirror.ordinal(object, storageKeyPath, wrapped: wrappedKeyPath)
            object.observationRegistrar.withMutation(of: object, keyPath: wrappedKeyPath) {
                object[keyPath: storageKeyPath].value = newValue
            }
            return
        }
        let storage = object[keyPath: storageKeyPath]
        let ordinal = ModelMirror.ordinal(object, storageKeyPath, wrapped: wrappedKeyPath, slot: storage.slot)
        if let composite = storage.composite {
            let slot = context.makeCompositeSlot(object, wrappedKeyPath, ordinal: ordinal, codec: composite)
            object.observationRegistrar.withMutation(of: object, keyPath: wrappedKeyPath) {
                context.setCompositeValue(id, slot, newValue)
            }
            return
        }
        object.observationRegistrar.withMutation(of: object, keyPath: wrappedKeyPath) {
            context.setAttributeValue(id, object.binding!, ordinal, storage.codec!.stored(newValue))
        }
    }

    func describe(name: String) -> PropertyDescription {
        if let composite {
            switch composite.shape {
            case .failure(let error):
                return .invalid("attribute '\(name)': \(error.message)")
            case .success(let shape):
                let defaults = composite.leaves(of: value)
                return .composite(
                    shape.leaves.indices.map { i in
                        AttributeDescription(
                            shape.name(of: i, in: name), shape.leaves[i].type, optional: shape.leaves[i].isOptional,
                            default: defaults[i])
                    })
            }
        }
        let codec = codec!
        let description = AttributeDescription(
            name, codec.attributeType, optional: codec.isOptional, default: codec.stored(value),
            originalName: originalName)
        return .attribute(description, unique: options.contains(.unique), indexed: options.contains(.indexed))
    }

    var unmanagedValue: TrellisCore.Value? { codec?.stored(value) }
    var unmanagedLeaves: [TrellisCore.Value]? { composite?.leaves(of: value) }
    var unmanagedTargets: [Model]? { nil }
}

/// Converts an attribute's Swift type to and from what the store holds; `Attribute` keeps the one its initializer
/// picked, so that enums need no conformance of their own.
protocol AttributeCodec<Wrapped> {
    associatedtype Wrapped
    static var attributeType: AttributeType { get }
    static var isOptional: Bool { get }
    static func stored(_ value: Wrapped) -> Value
    /// nil when `value` is not of the type (or, for an enum, is a raw value with no case).
    static func value(of value: Value) -> Wrapped?
}

/// Converts a composite attribute's Swift type to and from its leaf columns (in `CompositeShape` order).
protocol CompositeCodec<Wrapped> {
    associatedtype Wrapped
    static var shape: Result<CompositeShape, ShapeError> { get }
    static func leaves(of value: Wrapped) -> [Value]
    /// nil when the leaves do not make a value (a required field holding null).
    static func value(of leaves: [Value]) -> Wrapped?
    /// Both conversions, with what they need found once: a managed object's slot keeps them.
    static var coder: CompositeCoder<Wrapped> { get }
}

/// A `Codable` struct's conversion, through `CompositeShape`'s encoder and decoder.
enum CodableCompositeCodec<Wrapped: Codable>: CompositeCodec {
    static var shape: Result<CompositeShape, ShapeError> { CompositeShape.of(Wrapped.self) }
    static func leaves(of value: Wrapped) -> [Value] {
        guard case .success(let shape) = shape else { return [] }
        return shape.leaves(of: value)
    }
    static func value(of leaves: [Value]) -> Wrapped? {
        guard case .success(let shape) = shape, leaves.count == shape.leaves.count else { return nil }
        return shape.value(Wrapped.self, from: leaves)
    }
    static var coder: CompositeCoder<Wrapped> {
        guard case .success(let shape) = shape else {
            return CompositeCoder(leaves: { _ in [] }, value: { _, _ in false })
        }
        // Through `Codable`: initializes the pointee when the leaves make a value.
        let decode: ([Value], UnsafeMutablePointer<Wrapped>) -> Bool = { leaves, pointer in
            guard let value = value(of: leaves) else { return false }
            pointer.initialize(to: value)
            return true
        }
        if let direct = DirectFields.of(Wrapped.self, shape) {
            // Leaves that do not fit their fields go through `Codable`, which tells a missing value the same way.
            return CompositeCoder(
                leaves: { direct.leaves(of: $0) },
                value: { direct.build($0, into: $1) || decode($0, $1) },
                changes: { direct.changes(of: $0, from: $1) }, direct: direct)
        }
        return CompositeCoder(leaves: { shape.leaves(of: $0) }, value: decode)
    }
}

/// A `PersistentValue`'s own conversion.
enum PersistentCodec<Wrapped: PersistentValue>: AttributeCodec {
    static var attributeType: AttributeType { Wrapped.attributeType }
    static var isOptional: Bool { Wrapped.isOptional }
    static func stored(_ value: Wrapped) -> Value { value.persistentValue }
    static func value(of value: Value) -> Wrapped? { Wrapped(persistentValue: value) }
}

/// A raw value type's conversion, for a `RawRepresentable` type that is no `PersistentValue` itself.
enum RawValueCodec<Wrapped: RawRepresentable>: AttributeCodec where Wrapped.RawValue: PersistentValue {
    static var attributeType: AttributeType { Wrapped.RawValue.attributeType }
    static var isOptional: Bool { false }
    static func stored(_ value: Wrapped) -> Value { value.rawValue.persistentValue }
    static func value(of value: Value) -> Wrapped? {
        Wrapped.RawValue(persistentValue: value).flatMap(Wrapped.init(rawValue:))
    }
}

/// `RawValueCodec` for an optional: nil is null.
enum OptionalRawValueCodec<Raw: RawRepresentable>: AttributeCodec where Raw.RawValue: PersistentValue {
    static var attributeType: AttributeType { Raw.RawValue.attributeType }
    static var isOptional: Bool { true }
    static func stored(_ value: Raw?) -> Value {
        guard let value else { return .null }
        return value.rawValue.persistentValue
    }
    static func value(of value: Value) -> Raw?? {
        if value.isNull { return .some(nil) }
        return RawValueCodec<Raw>.value(of: value).map { .some($0) }
    }
}

import Foundation
@_spi(Reflection) import Swift
import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// A composite property of a model class, as one context's objects of that class use it: its ordinal, leaf columns
/// and conversion, found once (the first read or write through the wrapper) and shared by the objects' slots.
class AnyCompositeProperty {
    /// The wrapped property's key path, by identity: what finds the property without reading the wrapper's storage.
    let keyPath: AnyKeyPath
    let entity: UInt32
    let ordinal: Int
    /// The leaves' attribute positions, in `CompositeShape` order.
    let columns: [Int]
    /// A flat composite's direct field access (kept here, untyped, so that in-place changes need no generic lookup).
    let direct: DirectFields?

    init(keyPath: AnyKeyPath, entity: UInt32, ordinal: Int, columns: [Int], direct: DirectFields?) {
        self.keyPath = keyPath
        self.entity = entity
        self.ordinal = ordinal
        self.columns = columns
        self.direct = direct
    }
}

/// `AnyCompositeProperty` of a property of type `V`.
final class CompositeProperty<V>: AnyCompositeProperty {
    let coder: CompositeCoder<V>

    init(keyPath: AnyKeyPath, entity: UInt32, ordinal: Int, columns: [Int], coder: CompositeCoder<V>) {
        self.coder = coder
        super.init(keyPath: keyPath, entity: entity, ordinal: ordinal, columns: columns, direct: coder.direct)
    }
}

/// One composite property of one managed object: its leaves as the object's context last read or wrote them, valid
/// while the context's `compositeStamp` is `stamp`. The getter decodes from these leaves without reading the row
/// again, and the setter compares the new leaves with them.
final class CompositeSlot {
    let property: AnyCompositeProperty
    var stamp: UInt64?
    var leaves: [Value] = []

    init(_ property: AnyCompositeProperty) { self.property = property }

    /// The property's conversion; `V` is the type of the key path that found the slot.
    @inline(__always)
    func coder<V>(as type: V.Type) -> CompositeCoder<V> {
        unsafeDowncast(property, to: CompositeProperty<V>.self).coder
    }
}

/// A composite type's conversion to and from its leaves, found once per property.
struct CompositeCoder<V> {
    let leaves: (V) -> [Value]
    /// Initializes the pointee with the value the leaves make and returns true; false, leaving it uninitialized, when
    /// they make none (a required field holding null). Through a pointer rather than an optional result: `V?` of an
    /// unspecialized `V` costs a metadata lookup per call.
    let value: ([Value], UnsafeMutablePointer<V>) -> Bool
    /// The leaves of a value that differ from `old` (its leaves as stored), with their positions.
    let changes: (_ value: V, _ old: [Value]) -> [(position: Int, leaf: Value)]
    /// A flat composite's direct field access: in-place changes read and compare fields without leaf arrays.
    let direct: DirectFields?

    init(
        leaves: @escaping (V) -> [Value], value: @escaping ([Value], UnsafeMutablePointer<V>) -> Bool,
        changes: ((V, [Value]) -> [(position: Int, leaf: Value)])? = nil, direct: DirectFields? = nil
    ) {
        self.leaves = leaves
        self.value = value
        self.direct = direct
        self.changes =
            changes ?? { value, old in
                let new = leaves(value)
                return new.indices.compactMap { k in k < old.count && new[k] == old[k] ? nil : (k, new[k]) }
            }
    }
}

extension Model {
    /// The slot of the composite property with this wrapped key path, if the object has one.
    @inline(__always)
    func compositeSlot(_ keyPath: AnyKeyPath) -> CompositeSlot? {
        for slot in compositeSlots where slot.property.keyPath === keyPath { return slot }
        return nil
    }
}

/// Direct access to the stored fields of a flat composite struct (every field a scalar leaf, no nested or optional
/// composite): leaves are read from, and a value built at, the fields' offsets, without going through `Codable`.
/// Used only when it agrees with the type's `Codable` conversion on probe values (see `of(_:_:)`).
final class DirectFields: @unchecked Sendable {
    // Unchecked: immutable offsets and metatypes.
    struct Field {
        let offset: Int
        let type: any PersistentValue.Type
        let kind: Kind
    }

    /// The field types read and written without their metatype.
    enum Kind {
        case int, int64, int32, double, bool, string, date
        case optionalInt, optionalDouble, optionalBool, optionalString, optionalDate
        case other

        init(_ type: any PersistentValue.Type) {
            let known: [(any PersistentValue.Type, Kind)] = [
                (Int.self, .int), (Int64.self, .int64), (Int32.self, .int32), (Double.self, .double),
                (Bool.self, .bool), (String.self, .string), (Date.self, .date), (Int?.self, .optionalInt),
                (Double?.self, .optionalDouble), (Bool?.self, .optionalBool), (String?.self, .optionalString),
                (Date?.self, .optionalDate),
            ]
            self = known.first { ObjectIdentifier($0.0) == ObjectIdentifier(type) }?.1 ?? .other
        }
    }

    /// In leaf order.
    let fields: [Field]

    private init(_ fields: [Field]) { self.fields = fields }

    private static let cache = Mutex<[ObjectIdentifier: DirectFields?]>([:])

    /// The direct access of `T`, or nil when its fields are not exactly its shape's leaves, or reading and building
    /// them directly does not give what its `Codable` conversion gives.
    static func of<T: Codable>(_ type: T.Type, _ shape: CompositeShape) -> DirectFields? {
        let key = ObjectIdentifier(type)
        if let known = cache.locked({ $0[key] }) { return known }
        let found = find(type, shape)
        cache.locked { _ = $0.updateValue(found, forKey: key) }
        return found
    }

    private static func find<T: Codable>(_ type: T.Type, _ shape: CompositeShape) -> DirectFields? {
        guard !shape.isOptionalRoot, shape.leaves.allSatisfy({ !$0.isPresence && $0.path.count == 1 }) else {
            return nil
        }
        var listed: [(name: String, offset: Int, type: Any.Type)] = []
        let complete = _forEachField(of: type, options: []) { name, offset, fieldType, _ in
            listed.append((String(cString: name), offset, fieldType))
            return true
        }
        guard complete, listed.count == shape.leaves.count else { return nil }
        var fields: [Field] = []
        for leaf in shape.leaves {
            guard let field = listed.first(where: { $0.name == leaf.path[0] }),
                let scalar = field.type as? any PersistentValue.Type
            else { return nil }
            fields.append(Field(offset: field.offset, type: scalar, kind: Kind(scalar)))
        }
        guard Set(fields.map(\.offset)).count == fields.count else { return nil }
        let direct = DirectFields(fields)
        // Checked against `Codable` on probe values: every leaf at one value, and each leaf in turn at another.
        for variant in [nil] + shape.leaves.indices.map({ Optional($0) }) {
            let probe = shape.probeLeaves(variant: variant)
            guard let decoded = shape.value(T.self, from: probe), direct.leaves(of: decoded) == probe,
                let built = direct.value(T.self, from: probe), shape.leaves(of: built) == probe
            else { return nil }
        }
        return direct
    }

    /// The value's leaves, read at the fields' offsets.
    func leaves<T>(of value: T) -> [Value] {
        withUnsafePointer(to: value) { pointer in
            let base = UnsafeRawPointer(pointer)
            return fields.map { Self.read($0, base + $0.offset) }
        }
    }

    /// The fields of `value` whose leaves differ from `old`, read one at a time: no array of every leaf.
    func changes<T>(of value: T, from old: [Value]) -> [(position: Int, leaf: Value)] {
        guard old.count == fields.count else {
            return leaves(of: value).enumerated().map { ($0.offset, $0.element) }
        }
        return withUnsafePointer(to: value) { pointer in
            let base = UnsafeRawPointer(pointer)
            var out: [(position: Int, leaf: Value)] = []
            for k in fields.indices {
                let leaf = Self.read(fields[k], base + fields[k].offset)
                if leaf != old[k] { out.append((k, leaf)) }
            }
            return out
        }
    }

    /// Initializes the value at `base` from an object's row, each field read in place from its column (`columns`, in
    /// leaf order): no array, and no `Value` for the common scalar fields. False, leaving it uninitialized, when a
    /// column holds null for a required field or another type; the caller then takes the general path.
    func build(_ row: Row, _ columns: [Int], into base: UnsafeMutableRawPointer) -> Bool {
        guard columns.count == fields.count else { return false }
        let entity = row.id.entity
        var written = 0
        for field in fields {
            let key = AttributeKey(entity: entity, index: columns[written])
            let at = base + field.offset
            let fits: Bool
            switch field.kind {
            case .int: fits = Self.put(row.int(key).flatMap { Int(exactly: $0) }, at)
            case .int64: fits = Self.put(row.int(key), at)
            case .int32: fits = Self.put(row.int(key).flatMap { Int32(exactly: $0) }, at)
            case .double: fits = Self.put(row.double(key), at)
            case .bool: fits = Self.put(row.bool(key), at)
            case .string: fits = Self.put(row.string(key), at)
            case .date: fits = Self.put(row.date(key), at)
            // Optionals and the rest through their `Value`.
            default: fits = Self.write(field, at, row.value(at: columns[written]))
            }
            guard fits else { break }
            written += 1
        }
        if written == fields.count { return true }
        for k in 0..<written { Self.destroy(fields[k].type, base + fields[k].offset) }
        return false
    }

    @inline(__always)
    private static func put<F>(_ field: F?, _ pointer: UnsafeMutableRawPointer) -> Bool {
        guard let field else { return false }
        pointer.assumingMemoryBound(to: F.self).initialize(to: field)
        return true
    }

    /// The fields that differ between two values of the type (at `old` and `new`), compared in place field by
    /// field, as bits by leaf position: what an in-place change (`object.composite.field += 1`) records. Only for
    /// types of at most 64 fields (`fitsMask`).
    func changedFields(from old: UnsafeRawPointer, to new: UnsafeRawPointer) -> UInt64 {
        var changed: UInt64 = 0
        for k in fields.indices {
            let field = fields[k]
            let (x, y) = (old + field.offset, new + field.offset)
            let same: Bool
            switch field.kind {
            case .int: same = x.load(as: Int.self) == y.load(as: Int.self)
            case .int64: same = x.load(as: Int64.self) == y.load(as: Int64.self)
            case .int32: same = x.load(as: Int32.self) == y.load(as: Int32.self)
            case .bool: same = x.load(as: Bool.self) == y.load(as: Bool.self)
            case .string:
                same = x.assumingMemoryBound(to: String.self).pointee == y.assumingMemoryBound(to: String.self).pointee
            // Doubles and dates, optionals and the rest compare as the store does (NaN equals NaN).
            default: same = Self.read(field, x) == Self.read(field, y)
            }
            if !same { changed |= 1 << UInt64(k) }
        }
        return changed
    }

    /// Whether `changedFields` can tell every field apart.
    var fitsMask: Bool { fields.count <= 64 }

    /// One leaf of the value at `base`.
    func leaf(_ position: Int, at base: UnsafeRawPointer) -> Value {
        Self.read(fields[position], base + fields[position].offset)
    }

    /// A value built field by field from its leaves; nil when a leaf is not of its field's type.
    func value<T>(_ type: T.Type, from leaves: [Value]) -> T? {
        withUnsafeTemporaryAllocation(of: T.self, capacity: 1) { buffer -> T? in
            build(leaves, into: buffer.baseAddress!) ? buffer.baseAddress!.move() : nil
        }
    }

    /// Initializes the pointee field by field from the leaves; false, leaving it uninitialized, when a leaf is not of
    /// its field's type.
    func build<T>(_ leaves: [Value], into pointer: UnsafeMutablePointer<T>) -> Bool {
        build(leaves, into: UnsafeMutableRawPointer(pointer))
    }

    /// `build(_:into:)` into untyped memory laid out as the type.
    func build(_ leaves: [Value], into base: UnsafeMutableRawPointer) -> Bool {
        guard leaves.count == fields.count else { return false }
        var written = 0
        for field in fields {
            let fits = Self.write(field, base + field.offset, leaves[written])
            guard fits else { break }
            written += 1
        }
        if written == fields.count { return true }
        // A leaf did not fit: undo the fields written so far.
        for k in 0..<written { Self.destroy(fields[k].type, base + fields[k].offset) }
        return false
    }

    // Each common field type read and written by its concrete conformance (no generic metadata per call); the
    // others through their metatype.

    private static func read(_ field: Field, _ pointer: UnsafeRawPointer) -> Value {
        switch field.kind {
        case .int: return get(Int.self, pointer)
        case .int64: return get(Int64.self, pointer)
        case .int32: return get(Int32.self, pointer)
        case .double: return get(Double.self, pointer)
        case .bool: return get(Bool.self, pointer)
        case .string: return get(String.self, pointer)
        case .date: return get(Date.self, pointer)
        case .optionalInt: return get(Int?.self, pointer)
        case .optionalDouble: return get(Double?.self, pointer)
        case .optionalBool: return get(Bool?.self, pointer)
        case .optionalString: return get(String?.self, pointer)
        case .optionalDate: return get(Date?.self, pointer)
        case .other: return get(field.type, pointer)
        }
    }

    private static func write(_ field: Field, _ pointer: UnsafeMutableRawPointer, _ value: Value) -> Bool {
        switch field.kind {
        case .int: return put(Int.self, pointer, value)
        case .int64: return put(Int64.self, pointer, value)
        case .int32: return put(Int32.self, pointer, value)
        case .double: return put(Double.self, pointer, value)
        case .bool: return put(Bool.self, pointer, value)
        case .string: return put(String.self, pointer, value)
        case .date: return put(Date.self, pointer, value)
        case .optionalInt: return put(Int?.self, pointer, value)
        case .optionalDouble: return put(Double?.self, pointer, value)
        case .optionalBool: return put(Bool?.self, pointer, value)
        case .optionalString: return put(String?.self, pointer, value)
        case .optionalDate: return put(Date?.self, pointer, value)
        case .other: return put(field.type, pointer, value)
        }
    }

    @inline(__always)
    private static func get<F: PersistentValue>(_ type: F.Type, _ pointer: UnsafeRawPointer) -> Value {
        pointer.assumingMemoryBound(to: F.self).pointee.persistentValue
    }

    @inline(__always)
    private static func put<F: PersistentValue>(
        _ type: F.Type, _ pointer: UnsafeMutableRawPointer, _ value: Value
    )
        -> Bool
    {
        guard let field = F(persistentValue: value) else { return false }
        pointer.assumingMemoryBound(to: F.self).initialize(to: field)
        return true
    }

    private static func destroy<F: PersistentValue>(_ type: F.Type, _ pointer: UnsafeMutableRawPointer) {
        pointer.assumingMemoryBound(to: F.self).deinitialize(count: 1)
    }
}

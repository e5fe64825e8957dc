import Foundation
import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// The columns a `Codable` composite attribute is stored as: one leaf per stored property of a supported type, nested
/// composites flattened, and a presence column per optional nested composite. Found once per type by decoding it
/// with a decoder that records what it is asked for.
///
/// Leaf names are the property's name and the field path joined with dots (`address.geo.lat`); the presence column of
/// an optional composite is named by its path (`address.geo`, or `address` for an optional attribute) and holds
/// true when the composite is there.
final class CompositeShape: Sendable {
    struct Leaf: Sendable {
        /// Field names below the attribute (empty for an optional attribute's own presence column).
        let path: [String]
        let type: AttributeType
        let isOptional: Bool
        /// A presence column (Bool, required): true when the optional composite at `path` holds a value.
        let isPresence: Bool
    }

    /// What a field of a container is: a value leaf, or a nested composite (its container, and its presence leaf
    /// when it is optional).
    enum Field: Sendable {
        case leaf(Int)
        case composite(node: Int, presence: Int?)
    }

    let leaves: [Leaf]
    /// Leaf positions by their joined path.
    let positions: [String: Int]
    /// Per container (0: the attribute's own struct), its fields by name: coding looks fields up here, one short
    /// string each, instead of joining paths.
    let nodes: [[String: Field]]
    /// Per container, its fields in coding order: `FieldCursor` finds each with one comparison when asked in order.
    let orderedNodes: [[(name: String, field: Field)]]

    private init(_ leaves: [Leaf]) {
        self.leaves = leaves
        self.positions = Dictionary(
            leaves.enumerated().map { ($1.path.joined(separator: "."), $0) }, uniquingKeysWith: { a, _ in a })
        var nodes: [[String: Field]] = [[:]]
        var nodeOfPath: [[String]: Int] = [[]: 0]
        func node(_ path: [String]) -> Int {
            if let n = nodeOfPath[path] { return n }
            let parent = node(Array(path.dropLast()))
            nodes.append([:])
            let n = nodes.count - 1
            nodeOfPath[path] = n
            if case .composite(_, let presence)? = nodes[parent][path.last!] {
                nodes[parent][path.last!] = .composite(node: n, presence: presence)
            } else {
                nodes[parent][path.last!] = .composite(node: n, presence: nil)
            }
            return n
        }
        for (i, leaf) in leaves.enumerated() where !leaf.path.isEmpty {
            let parent = node(Array(leaf.path.dropLast()))
            let name = leaf.path.last!
            if leaf.isPresence {
                let child = node(leaf.path)
                nodes[parent][name] = .composite(node: child, presence: i)
            } else {
                nodes[parent][name] = .leaf(i)
            }
        }
        self.nodes = nodes
        // Each container's fields in the order their leaves were found: the order its type codes them in.
        var ordered = [[(name: String, field: Field)]](repeating: [], count: nodes.count)
        for leaf in leaves where !leaf.path.isEmpty {
            // A nested composite's own field comes in with its first leaf: every prefix of the path names one.
            for end in 1...leaf.path.count {
                let parent = nodeOfPath[Array(leaf.path[..<(end - 1)])]!
                let name = leaf.path[end - 1]
                if !ordered[parent].contains(where: { $0.name == name }), let field = nodes[parent][name] {
                    ordered[parent].append((name, field))
                }
            }
        }
        self.orderedNodes = ordered
    }

    /// Whether the attribute itself is optional (its presence leaf comes first, with an empty path).
    var isOptionalRoot: Bool { leaves.first.map { $0.isPresence && $0.path.isEmpty } ?? false }

    /// The positions of leaves that hold field values (not presence), the ones a key path can end at.
    var valueLeaves: [Int] { leaves.indices.filter { !leaves[$0].isPresence } }

    /// The attribute name of a leaf of the attribute named `name`.
    func name(of leaf: Int, in name: String) -> String {
        leaves[leaf].path.isEmpty ? name : name + "." + leaves[leaf].path.joined(separator: ".")
    }

    private static let cache = Mutex<[ObjectIdentifier: Result<CompositeShape, ShapeError>]>([:])

    /// The shape of `type` (an optional's is its wrapped type's with a presence column in front), or why it has none.
    static func of<T: Decodable>(_ type: T.Type) -> Result<CompositeShape, ShapeError> {
        let key = ObjectIdentifier(type)
        if let known = cache.locked({ $0[key] }) { return known }
        let result: Result<CompositeShape, ShapeError>
        do {
            let recorder = ShapeRecorder()
            if let optional = type as? any OptionalComposite.Type {
                recorder.leaves.append(Leaf(path: [], type: .bool, isOptional: false, isPresence: true))
                try optional.discoverWrapped(recorder)
            } else {
                _ = try recorder.discover(type, at: [], optional: false)
            }
            guard !recorder.leaves.isEmpty else { throw ShapeError("\(type) has no stored fields") }
            result = .success(CompositeShape(recorder.leaves))
        } catch let error as ShapeError {
            result = .failure(error)
        } catch {
            result = .failure(ShapeError("\(type) cannot be a composite attribute: \(error)"))
        }
        cache.locked { $0[key] = result }
        return result
    }

    /// Encodes a value as its leaves, in leaf order.
    func leaves<T: Encodable>(of value: T) -> [Value] {
        let encoder = LeafEncoder(self)
        if isOptionalRoot, let optional = value as? any OptionalComposite {
            encoder.values[0] = .bool(optional.encodeWrapped(encoder))
        } else {
            // A composite's fields are all supported types (the shape was found), so encoding cannot fail.
            try? value.encode(to: LeafEncoding(encoder, node: 0))
        }
        return encoder.values
    }

    /// Decodes a value from its leaves; nil when they do not make one (a required field holding null).
    func value<T: Decodable>(_ type: T.Type, from values: [Value]) -> T? {
        let decoding = LeafDecoding(self, values, node: 0)
        if isOptionalRoot, let optional = type as? any OptionalComposite.Type {
            guard case .bool(true) = values[0] else { return optional.absent as? T }
            return try? optional.decodeWrapped(decoding) as? T
        }
        return try? T(from: decoding)
    }

    /// The leaves of a probe value: every field a fixed value of its type, composites present, and the value leaf
    /// `variant` a second value, so that the key path that reads it can be told from the others.
    func probeLeaves(variant: Int?) -> [Value] {
        leaves.enumerated().map { i, leaf in
            leaf.isPresence ? .bool(true) : Self.sample(leaf.type, alternate: i == variant)
        }
    }

    /// A value of the type, one of two distinct ones.
    static func sample(_ type: AttributeType, alternate: Bool) -> Value {
        let n: Int64 = alternate ? 1 : 0
        switch type {
        case .bool: return .bool(alternate)
        case .int, .int8, .int16, .int32, .int64: return .int(n)
        case .double, .float: return .double(Double(n))
        case .string: return .string(alternate ? "b" : "a")
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(n)))
        case .data: return .data(Data(alternate ? [1] : []))
        case .uuid: return .uuid(UUID(uuid: (UInt8(n), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case .url: return .url(URL(string: alternate ? "b:" : "a:")!)
        case .decimal: return .decimal(Decimal(n))
        case .stringArray, .stringSet: return .list(alternate ? [.string("b")] : [])
        case .stringDictionary: return .list(alternate ? [.string("b"), .string("b")] : [])
        case .metadataDictionary: return .list(alternate ? [.string("b"), .null] : [])
        case .intArray: return .list(alternate ? [.int(1)] : [])
        }
    }
}

/// Why a type cannot be a composite attribute.
struct ShapeError: Error, Sendable {
    let message: String
    init(_ message: String) { self.message = message }
}

/// `Optional` of a composite: its presence column comes first, then the wrapped type's leaves, all optional.
protocol OptionalComposite {
    static func discoverWrapped(_ recorder: ShapeRecorder) throws
    static func decodeWrapped(_ decoding: LeafDecoding) throws -> Any
    static var absent: Any { get }
    /// Encodes the wrapped value, if any; whether there was one.
    func encodeWrapped(_ encoder: LeafEncoder) -> Bool
}

extension Optional: OptionalComposite where Wrapped: Codable {
    static func discoverWrapped(_ recorder: ShapeRecorder) throws {
        _ = try recorder.discover(Wrapped.self, at: [], optional: true)
    }
    static func decodeWrapped(_ decoding: LeafDecoding) throws -> Any {
        Optional.some(try Wrapped(from: decoding)) as Any
    }
    static var absent: Any { Optional<Wrapped>.none as Any }
    func encodeWrapped(_ encoder: LeafEncoder) -> Bool {
        guard let self else { return false }
        try? self.encode(to: LeafEncoding(encoder, node: 0))
        return true
    }
}

// MARK: Discovering a shape

/// Collects leaves while a type decodes itself from a `ShapeDecoding`.
final class ShapeRecorder {
    var leaves: [CompositeShape.Leaf] = []

    /// Records the leaves of `type` at `path` (`optional` inside an optional composite) and returns a placeholder of
    /// the type for its parent's initializer to store.
    func discover<T: Decodable>(_ type: T.Type, at path: [String], optional: Bool) throws -> T {
        if let scalar = type as? any PersistentValue.Type {
            leaves.append(
                .init(
                    path: path, type: scalar.attributeType, isOptional: optional || scalar.isOptional, isPresence: false
                ))
            guard
                let value = scalar.init(persistentValue: CompositeShape.sample(scalar.attributeType, alternate: false))
                    as? T
            else { throw ShapeError("\(path.joined(separator: ".")): unsupported field type \(type)") }
            return value
        }
        return try T(from: ShapeDecoding(self, path: path, optional: optional))
    }
}

/// The decoder that finds a shape: fields answer with placeholders and are recorded as leaves.
struct ShapeDecoding: Decoder {
    let recorder: ShapeRecorder
    let path: [String]
    let optional: Bool
    var codingPath: [any CodingKey] { path.map(PathKey.init) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ recorder: ShapeRecorder, path: [String], optional: Bool) {
        self.recorder = recorder
        self.path = path
        self.optional = optional
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(ShapeContainer<Key>(decoding: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw ShapeError("\(path.joined(separator: ".")): arrays and sets are not supported inside a composite")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw ShapeError(
            "\(path.joined(separator: ".")): single-value types (enums, wrappers) are not supported inside a composite")
    }
}

/// A keyed container of `ShapeDecoding`: `decodeNil` marks the next field optional (it is how `decodeIfPresent`
/// begins), and answers false so that optional composites are explored.
final class ShapeContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoding: ShapeDecoding
    private var optionalKeys: Set<String> = []
    var codingPath: [any CodingKey] { decoding.codingPath }
    var allKeys: [Key] { [] }

    init(decoding: ShapeDecoding) { self.decoding = decoding }

    func contains(_ key: Key) -> Bool { true }

    func decodeNil(forKey key: Key) throws -> Bool {
        optionalKeys.insert(key.stringValue)
        return false
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let path = decoding.path + [key.stringValue]
        let marked = optionalKeys.contains(key.stringValue)
        if marked && !(type is any PersistentValue.Type) {
            decoding.recorder.leaves.append(.init(path: path, type: .bool, isOptional: false, isPresence: true))
        }
        return try decoding.recorder.discover(type, at: path, optional: decoding.optional || marked)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try scalar(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try scalar(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try scalar(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try scalar(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try scalar(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try scalar(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try scalar(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try scalar(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try scalar(type, key) }

    private func scalar<T: PersistentValue & Decodable>(_ type: T.Type, _ key: Key) throws -> T {
        try decode(type, forKey: key)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        throw ShapeError("custom nested containers are not supported inside a composite")
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw ShapeError("\(key.stringValue): arrays and sets are not supported inside a composite")
    }

    func superDecoder() throws -> any Decoder { throw ShapeError("superclass decoding is not supported") }
    func superDecoder(forKey key: Key) throws -> any Decoder {
        throw ShapeError("superclass decoding is not supported")
    }
}

/// A coding key made from a field name.
struct PathKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// Finds a container's fields by name, trying the one after the last found first: synthesized coding asks for the
/// fields in declaration order, so each lookup is usually one string comparison instead of a hash.
final class FieldCursor {
    private let fields: [(name: String, field: CompositeShape.Field)]
    private var next = 0

    init(_ fields: [(name: String, field: CompositeShape.Field)]) { self.fields = fields }

    /// The field named `name`, or nil; `advance` moves past it (a decode or encode does, a presence test does not).
    func field(_ name: String, advance: Bool) -> CompositeShape.Field? {
        let i: Int
        if next < fields.count, fields[next].name == name {
            i = next
        } else if let found = fields.firstIndex(where: { $0.name == name }) {
            i = found
        } else {
            return nil
        }
        if advance { next = i + 1 }
        return fields[i].field
    }
}

// MARK: Encoding

/// Collects a value's leaves as it encodes itself.
final class LeafEncoder {
    let shape: CompositeShape
    var values: [Value]

    init(_ shape: CompositeShape) {
        self.shape = shape
        // Presence columns start false (an absent optional composite encodes nothing), value leaves null.
        self.values = shape.leaves.map { $0.isPresence ? .bool(false) : .null }
    }
}

struct LeafEncoding: Encoder {
    let encoder: LeafEncoder
    let node: Int
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ encoder: LeafEncoder, node: Int) {
        self.encoder = encoder
        self.node = node
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(
            LeafEncodingContainer<Key>(encoder: encoder, fields: FieldCursor(encoder.shape.orderedNodes[node])))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer { preconditionFailure("not a composite field") }
    func singleValueContainer() -> any SingleValueEncodingContainer { preconditionFailure("not a composite field") }
}

struct LeafEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: LeafEncoder
    let fields: FieldCursor
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws {}

    // Inlined into each typed `encode`, so that the value's type is known there (no generic metadata per field).
    @inline(__always)
    private func put<T: PersistentValue>(_ value: T, _ key: Key) {
        guard case .leaf(let i)? = fields.field(key.stringValue, advance: true) else { return }
        encoder.values[i] = value.persistentValue
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws { put(value, key) }
    mutating func encode(_ value: String, forKey key: Key) throws { put(value, key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { put(value, key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { put(value, key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { put(value, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { put(value, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { put(value, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { put(value, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { put(value, key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        switch fields.field(key.stringValue, advance: true) {
        case .leaf(let i)?:
            if let scalar = value as? any PersistentValue { encoder.values[i] = scalar.persistentValue }
        case .composite(let node, let presence)?:
            // A nested composite: present (its presence column, if it is optional), then its fields.
            if let presence { encoder.values[presence] = .bool(true) }
            try value.encode(to: LeafEncoding(encoder, node: node))
        case nil:
            return
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    )
        -> KeyedEncodingContainer<NestedKey>
    {
        preconditionFailure("custom nested containers are not supported inside a composite")
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        preconditionFailure("arrays are not supported inside a composite")
    }

    mutating func superEncoder() -> any Encoder { preconditionFailure("superclass encoding is not supported") }
    mutating func superEncoder(forKey key: Key) -> any Encoder {
        preconditionFailure("superclass encoding is not supported")
    }
}

// MARK: Decoding

/// Decodes a composite from its leaves.
struct LeafDecoding: Decoder {
    let shape: CompositeShape
    let values: [Value]
    let node: Int
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ shape: CompositeShape, _ values: [Value], node: Int) {
        self.shape = shape
        self.values = values
        self.node = node
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(
            LeafDecodingContainer<Key>(decoding: self, fields: FieldCursor(shape.orderedNodes[node])))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw ShapeError("not a composite field") }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { throw ShapeError("not a composite field") }
}

struct LeafDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoding: LeafDecoding
    let fields: FieldCursor
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { fields.field(key.stringValue, advance: false) != nil }

    /// A field is nil when its leaf holds null, or, for a composite, when its presence column is not true.
    func decodeNil(forKey key: Key) throws -> Bool {
        switch fields.field(key.stringValue, advance: false) {
        case .leaf(let i)?: return decoding.values[i].isNull
        case .composite(_, let presence?)?: return decoding.values[presence] != .bool(true)
        case .composite(_, nil)?: return false
        case nil: return true
        }
    }

    // Inlined into each typed `decode`, so that the value's type is known there (no generic metadata per field).
    @inline(__always)
    private func scalar<T: PersistentValue>(_ type: T.Type, _ key: Key) throws -> T {
        guard case .leaf(let i)? = fields.field(key.stringValue, advance: true),
            let value = T(persistentValue: decoding.values[i])
        else {
            throw ShapeError("\(key.stringValue) holds no \(type)")
        }
        return value
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try scalar(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try scalar(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try scalar(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try scalar(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try scalar(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try scalar(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try scalar(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try scalar(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try scalar(type, key) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        switch fields.field(key.stringValue, advance: true) {
        case .leaf(let i)?:
            guard let scalar = type as? any PersistentValue.Type,
                let value = scalar.init(persistentValue: decoding.values[i]) as? T
            else { throw ShapeError("\(key.stringValue) holds no \(type)") }
            return value
        case .composite(let node, _)?:
            return try T(from: LeafDecoding(decoding.shape, decoding.values, node: node))
        case nil:
            throw ShapeError("\(key.stringValue) is not a field of the composite")
        }
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        throw ShapeError("custom nested containers are not supported inside a composite")
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw ShapeError("arrays are not supported inside a composite")
    }

    func superDecoder() throws -> any Decoder { throw ShapeError("superclass decoding is not supported") }
    func superDecoder(forKey key: Key) throws -> any Decoder {
        throw ShapeError("superclass decoding is not supported")
    }
}

import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// What the `@Attribute` and `@Relationship` wrappers store inside a model object, seen without their generic types.
///
/// A property's *ordinal* is its position among the wrapped properties of its class, superclass properties first, in
/// declaration order (the order `Mirror` lists them). Storage caches its ordinal in `slot` once it is known.
protocol ModelPropertyStorage {
    /// Whether the wrapper is a `@Relationship` (else an `@Attribute`).
    static var isRelationship: Bool { get }
    /// The property's ordinal, or -1 while unknown.
    var slot: Int { get set }
    /// The schema description of the property (its name comes from the storage's label).
    func describe(name: String) -> PropertyDescription
    /// For an attribute of an unmanaged object: the value it holds.
    var unmanagedValue: Value? { get }
    /// For a relationship of an unmanaged object: the objects it holds.
    var unmanagedTargets: [Model]? { get }
    /// For a composite attribute of an unmanaged object: its leaves' values, in the order of its columns.
    var unmanagedLeaves: [Value]? { get }
}

extension ModelPropertyStorage {
    /// None: only composite attributes have leaves.
    var unmanagedLeaves: [Value]? { nil }

    /// A copy of the storage held at `address` (a field of this type inside a live model object).
    static func load(from address: UnsafeRawPointer) -> any ModelPropertyStorage { address.load(as: Self.self) }
}

import Foundation
import TrellisCore
import TrellisGraph
import TrellisJournal

/// Compiles the expression tree of a Foundation `Predicate` into a `QueryExpression`, walking it at run time through
/// the conformances below. Anything it does not know compiles to `.opaque`.
final class PredicateCompiler {
    private var variables: [PredicateExpressions.VariableID: QueryExpression] = [:]
    private var nextSlot = 1
    /// Reads known to be non-null where the part being compiled is evaluated (the right side of `x != nil && …`).
    private var nonNull: Set<QueryExpression.Path> = []
    let binding: (Model.Type) -> EntityBinding
    let schema: Schema

    init(schema: Schema, binding: @escaping (Model.Type) -> EntityBinding) {
        self.schema = schema
        self.binding = binding
    }

    /// The compiled form of a predicate over objects of `T`.
    func compile<T: Model>(_ predicate: Predicate<T>) -> QueryExpression {
        variables[predicate.variable.key] = .object(slot: 0, hops: [])
        return compile(predicate.expression)
    }

    func compile(_ expression: Any) -> QueryExpression {
        (expression as? any CompilableExpression)?.compile(self) ?? .opaque
    }

    func bind(_ variable: PredicateExpressions.VariableID, _ expression: QueryExpression) {
        variables[variable] = expression
    }

    func variable(_ key: PredicateExpressions.VariableID) -> QueryExpression {
        variables[key] ?? .opaque
    }

    /// Compiles a part that is evaluated only where `facts` hold.
    func assuming<R>(_ facts: Set<QueryExpression.Path>, _ body: () -> R) -> R {
        let saved = nonNull
        nonNull.formUnion(facts)
        defer { nonNull = saved }
        return body()
    }

    /// Whether the expression is a read that cannot be null where it is evaluated.
    func isKnownNonNull(_ e: QueryExpression) -> Bool {
        guard let path = e.path else { return false }
        return nonNull.contains { $0.implies(path) }
    }

    func newSlot() -> Int {
        defer { nextSlot += 1 }
        return nextSlot
    }

    /// A key path applied to an object: an attribute, a to-one hop, a to-many relationship, or `objectID`.
    /// `leafOnly`: the key path reaches inside a property (`\Customer.address.city`), so only a composite's field
    /// compiles; anything else (`\Project.chores.count` seen whole) is left to the caller.
    func property(
        of base: QueryExpression, _ type: Model.Type, _ keyPath: AnyKeyPath, leafOnly: Bool = false
    ) -> QueryExpression {
        guard case .object(let slot, let hops) = base, let target = KeyPathProbe.resolve(keyPath, on: type) else {
            return .opaque
        }
        let binding = binding(type)
        if case .leaf = target, let a = binding.attribute(at: target) {
            return .attribute(slot: slot, hops: hops, attribute: a)
        }
        if leafOnly { return .opaque }
        guard case .property(let ordinal) = target else { return base }
        switch binding.columns[ordinal] {
        case .attribute(let a): return .attribute(slot: slot, hops: hops, attribute: a)
        case .composite: return .opaque
        case .relationship(let r):
            if schema.layouts[Int(binding.entity)].relationships[r].isToMany {
                return .targets(slot: slot, hops: hops, relationship: r)
            }
            return .object(slot: slot, hops: hops + [r])
        }
    }

    /// A captured value: a persistent value, an enum whose raw value is one (as its raw value), an object ID, or a
    /// sequence of them (for `IN`).
    static func constant(_ value: Any) -> QueryExpression {
        // A metadata value as a key's value reads (`.null` as the marker a present null key reads as).
        if let m = value as? MetadataValue { return .constant(m.isNull ? QueryExpression.metadataNull : m.value) }
        if let v = value as? any PersistentValue { return .constant(v.persistentValue) }
        if let id = value as? ObjectID { return .constant(QueryExpression.reference(id)) }
        if let id = value as? ObjectID? { return .constant(QueryExpression.reference(id)) }
        // The cast looks through an optional that holds a value; a nil one is null.
        if let raw = value as? any RawRepresentable, let v = raw.rawValue as? any PersistentValue {
            return .constant(v.persistentValue)
        }
        if let optional = value as? any OptionalValue, optional.isNil { return .constant(.null) }
        if let sequence = value as? any Sequence {
            var values = Set<Value>()
            for element in sequence {
                guard case .constant(let v) = constant(element) else { return .opaque }
                values.insert(v)
            }
            return .list(values)
        }
        return .opaque
    }
}

/// An `Optional` of any type, to tell a captured nil from a value the compiler does not know.
private protocol OptionalValue {
    var isNil: Bool { get }
}

extension Optional: OptionalValue {
    fileprivate var isNil: Bool { self == nil }
}

import Foundation
import TrellisCore
import TrellisGraph
import TrellisJournal

/// Compiles the expression tree of a Foundation `Predicate` into a `QueryExpression`, walking it at run time through
/// the conformances below. Anything it does not know compiles to `.opaque`.
final class PredicateCompiler {
    private var variables: [PredicateExpressions.VariableID: QueryExpression] = [:]
    private var nextSlot = 1
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

    func newSlot() -> Int {
        defer { nextSlot += 1 }
        return nextSlot
    }

    /// A key path applied to an object: an attribute, a to-one hop, a to-many relationship, or `objectID`.
    func property(of base: QueryExpression, _ type: Model.Type, _ keyPath: AnyKeyPath) -> QueryExpression {
        guard case .object(let slot, let hops) = base, let target = KeyPathProbe.resolve(keyPath, on: type) else {
            return .opaque
        }
        guard case .property(let ordinal) = target else { return base }
        let binding = binding(type)
        switch binding.columns[ordinal] {
        case .attribute(let a): return .attribute(slot: slot, hops: hops, attribute: a)
        case .relationship(let r):
            if schema.layouts[Int(binding.entity)].relationships[r].isToMany {
                return .targets(slot: slot, hops: hops, relationship: r)
            }
            return .object(slot: slot, hops: hops + [r])
        }
    }

    /// A captured value: a persistent value, an object ID, or a sequence of them (for `IN`).
    static func constant(_ value: Any) -> QueryExpression {
        if let v = value as? any PersistentValue { return .constant(v.persistentValue) }
        if let id = value as? ObjectID { return .constant(QueryExpression.reference(id)) }
        if let id = value as? ObjectID? { return .constant(QueryExpression.reference(id)) }
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

/// A Foundation predicate expression that knows its compiled form.
protocol CompilableExpression {
    func compile(_ compiler: PredicateCompiler) -> QueryExpression
}

/// Key paths on collections of models that compile to counts.
protocol ToManyCollection {
    static var countKeyPath: AnyKeyPath { get }
    static var isEmptyKeyPath: AnyKeyPath { get }
}

extension Array: ToManyCollection where Element: Model {
    static var countKeyPath: AnyKeyPath { \[Element].count }
    static var isEmptyKeyPath: AnyKeyPath { \[Element].isEmpty }
}

extension PredicateExpressions.Variable: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression { c.variable(key) }
}

extension PredicateExpressions.KeyPath: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression {
        let base = c.compile(root)
        if let type = Root.Output.self as? Model.Type {
            return c.property(of: base, type, keyPath)
        }
        if let collection = Root.Output.self as? any ToManyCollection.Type, case .targets = base {
            if keyPath == collection.countKeyPath { return .count(base) }
            if keyPath == collection.isEmptyKeyPath { return .compare(.equal, .count(base), .constant(.int(0))) }
        }
        return .opaque
    }
}

extension PredicateExpressions.Value: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression { PredicateCompiler.constant(value) }
}

extension PredicateExpressions.NilLiteral: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression { .constant(.null) }
}

extension PredicateExpressions.Equal: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression { .compare(.equal, c.compile(lhs), c.compile(rhs)) }
}

extension PredicateExpressions.NotEqual: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression { .compare(.notEqual, c.compile(lhs), c.compile(rhs)) }
}

extension PredicateExpressions.Comparison: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression {
        let comparison: QueryExpression.Comparison
        switch op {
        case .lessThan: comparison = .less
        case .lessThanOrEqual: comparison = .lessOrEqual
        case .greaterThan: comparison = .greater
        case .greaterThanOrEqual: comparison = .greaterOrEqual
        }
        return .compare(comparison, c.compile(lhs), c.compile(rhs))
    }
}

extension PredicateExpressions.Conjunction: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression { .and(c.compile(lhs), c.compile(rhs)) }
}

extension PredicateExpressions.Disjunction: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression { .or(c.compile(lhs), c.compile(rhs)) }
}

extension PredicateExpressions.Negation: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression { .not(c.compile(wrapped)) }
}

extension PredicateExpressions.SequenceContains: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression {
        guard case .list(let values) = c.compile(sequence) else { return .opaque }
        return .isIn(c.compile(element), values)
    }
}

extension PredicateExpressions.SequenceContainsWhere: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression {
        let targets = c.compile(sequence)
        guard case .targets = targets else { return .opaque }
        let slot = c.newSlot()
        c.bind(variable.key, .object(slot: slot, hops: []))
        return .quantified(all: false, targets, slot: slot, c.compile(test))
    }
}

extension PredicateExpressions.SequenceAllSatisfy: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression {
        let targets = c.compile(sequence)
        guard case .targets = targets else { return .opaque }
        let slot = c.newSlot()
        c.bind(variable.key, .object(slot: slot, hops: []))
        return .quantified(all: true, targets, slot: slot, c.compile(test))
    }
}

extension PredicateExpressions.NilCoalesce: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression { .coalesce(c.compile(lhs), c.compile(rhs)) }
}

extension PredicateExpressions.OptionalFlatMap: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression {
        let inner = c.compile(wrapped)
        c.bind(variable.key, inner)
        return .flatMap(inner, c.compile(transform))
    }
}

extension PredicateExpressions.Conditional: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression {
        .conditional(c.compile(test), c.compile(trueBranch), c.compile(falseBranch))
    }
}

extension PredicateExpressions.Arithmetic: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression {
        let arithmetic: QueryExpression.Arithmetic
        switch op {
        case .add: arithmetic = .add
        case .subtract: arithmetic = .subtract
        case .multiply: arithmetic = .multiply
        }
        return .arithmetic(arithmetic, c.compile(lhs), c.compile(rhs))
    }
}

extension PredicateExpressions.UnaryMinus: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression { .negate(c.compile(wrapped)) }
}

extension PredicateExpressions.CollectionContainsCollection: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression {
        guard Base.Output.self == String.self, Other.Output.self == String.self else { return .opaque }
        return .stringContains(c.compile(base), c.compile(other))
    }
}

extension PredicateExpressions.SequenceStartsWith: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression {
        guard Base.Output.self == String.self, Prefix.Output.self == String.self else { return .opaque }
        return .stringHasPrefix(c.compile(base), c.compile(prefix))
    }
}

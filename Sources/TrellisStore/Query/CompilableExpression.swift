import Foundation
import TrellisCore
import TrellisGraph
import TrellisJournal

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

/// The types of collection attributes, whose `count` and `isEmpty` compile to the count of the stored elements.
protocol ScalarCollection {
    /// Nil where the stored elements do not count the collection's (a dictionary stores keys and values).
    static var countKeyPath: AnyKeyPath? { get }
    static var isEmptyKeyPath: AnyKeyPath { get }
}

extension Array: ScalarCollection where Element: PersistentElement {
    static var countKeyPath: AnyKeyPath? { \[Element].count }
    static var isEmptyKeyPath: AnyKeyPath { \[Element].isEmpty }
}

extension Set: ScalarCollection where Element == String {
    static var countKeyPath: AnyKeyPath? { \Set<String>.count }
    static var isEmptyKeyPath: AnyKeyPath { \Set<String>.isEmpty }
}

extension Dictionary: ScalarCollection where Key == String, Value: PersistentDictionaryValue {
    static var countKeyPath: AnyKeyPath? { nil }
    static var isEmptyKeyPath: AnyKeyPath { \[Key: Value].isEmpty }
}

extension PredicateExpressions.Variable: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression { c.variable(key) }
}

/// A key path expression that reads inside a model's property (`$0.address.city`), seen as one key path on the
/// model (`\Person.address.city`), so that a composite's field compiles to its column.
protocol ModelKeyPathExpression {
    func modelKeyPath(_ c: PredicateCompiler) -> (base: QueryExpression, type: Model.Type, keyPath: AnyKeyPath)?
}

extension PredicateExpressions.KeyPath: ModelKeyPathExpression {
    func modelKeyPath(_ c: PredicateCompiler) -> (base: QueryExpression, type: Model.Type, keyPath: AnyKeyPath)? {
        if let type = Root.Output.self as? Model.Type { return (c.compile(root), type, keyPath) }
        guard let inner = (root as? any ModelKeyPathExpression)?.modelKeyPath(c),
            let joined = inner.keyPath.appending(path: keyPath)
        else { return nil }
        return (inner.base, inner.type, joined)
    }
}

extension PredicateExpressions.KeyPath: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression {
        if let type = Root.Output.self as? Model.Type {
            return c.property(of: c.compile(root), type, keyPath)
        }
        let base = c.compile(root)
        if let collection = Root.Output.self as? any ToManyCollection.Type, case .targets = base {
            if keyPath == collection.countKeyPath { return .count(base) }
            if keyPath == collection.isEmptyKeyPath { return .compare(.equal, .count(base), .constant(.int(0))) }
        }
        if let collection = Root.Output.self as? any ScalarCollection.Type, base.path?.attribute != nil {
            // `$0.tags.isEmpty`, `$0.tags.count`: over the stored elements; null for a null collection.
            if keyPath == collection.countKeyPath { return .count(base) }
            if keyPath == collection.isEmptyKeyPath { return .compare(.equal, .count(base), .constant(.int(0))) }
        }
        if let path = modelKeyPath(c) { return c.property(of: path.base, path.type, path.keyPath, leafOnly: true) }
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

// Foundation evaluates `&&`, `||` and `? :` lazily, so what the left side (the test) proves holds for the right side
// (a branch): `$0.due != nil && $0.due! < cutoff` may unwrap.

extension PredicateExpressions.Conjunction: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression {
        let l = c.compile(lhs)
        return .and(l, c.assuming(l.nonNullPaths(when: true)) { c.compile(rhs) })
    }
}

extension PredicateExpressions.Disjunction: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression {
        let l = c.compile(lhs)
        return .or(l, c.assuming(l.nonNullPaths(when: false)) { c.compile(rhs) })
    }
}

extension PredicateExpressions.Negation: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression { .not(c.compile(wrapped)) }
}

extension PredicateExpressions.SequenceContains: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression {
        let compiled = c.compile(sequence)
        switch compiled {
        case .list(let values): return .isIn(c.compile(element), values)
        // A captured array of persistent values (`names.contains($0.name)`) compiles as one list value.
        case .constant(.list(let values)): return .isIn(c.compile(element), Set(values))
        default: break
        }
        // `$0.tags.contains("x")`: a collection attribute holding an element.
        if compiled.path?.attribute != nil, LHS.Output.self is any ScalarCollection.Type {
            return .elementContains(compiled, c.compile(element))
        }
        return .opaque
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
        let body = c.assuming(Set(inner.path.map { [$0] } ?? [])) { c.compile(transform) }
        // `$0.project?.name`: a read through the object is null anyway when the object is nil, so it is the read.
        if case .object(let slot, let hops) = inner, let read = body.path, read.slot == slot,
            read.hops.starts(with: hops)
        {
            return body
        }
        return .flatMap(inner, body)
    }
}

extension PredicateExpressions.ForcedUnwrap: CompilableExpression {
    /// A read a guard proved non-null (`$0.due != nil && $0.due! < cutoff`) is the read itself. Any other unwrap is
    /// left to Foundation, which throws for a nil.
    func compile(_ c: PredicateCompiler) -> QueryExpression {
        let read = c.compile(inner)
        return c.isKnownNonNull(read) ? read : .opaque
    }
}

extension PredicateExpressions.Conditional: CompilableExpression {
    func compile(_ c: PredicateCompiler) -> QueryExpression {
        let t = c.compile(test)
        return .conditional(
            t, c.assuming(t.nonNullPaths(when: true)) { c.compile(trueBranch) },
            c.assuming(t.nonNullPaths(when: false)) { c.compile(falseBranch) })
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

extension PredicateExpressions.DictionaryKeySubscript: CompilableExpression {
    /// `$0.metadata["color"]` on a `[String: String]` or `[String: MetadataValue]` attribute: the key's value, or
    /// null for a missing key (a key holding `MetadataValue.null` reads as `QueryExpression.metadataNull`).
    func compile(_ c: PredicateCompiler) -> QueryExpression {
        let dictionary = c.compile(wrapped)
        guard dictionary.path?.attribute != nil,
            Wrapped.Output.self == [String: String].self || Wrapped.Output.self == [String: MetadataValue].self
        else { return .opaque }
        return .keyValue(dictionary, c.compile(key))
    }
}

extension PredicateExpressions.DictionaryKeyDefaultValueSubscript: CompilableExpression {
    /// `$0.info["rating", default: .null]`: the key's value, or the default for a missing key.
    func compile(_ c: PredicateCompiler) -> QueryExpression {
        let dictionary = c.compile(wrapped)
        guard dictionary.path?.attribute != nil,
            Wrapped.Output.self == [String: String].self || Wrapped.Output.self == [String: MetadataValue].self
        else { return .opaque }
        return .coalesce(.keyValue(dictionary, c.compile(key)), c.compile(self.default))
    }
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

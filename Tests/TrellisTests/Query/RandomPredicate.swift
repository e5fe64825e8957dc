import Foundation
import TrellisCore

/// A random predicate over `Sample`'s attributes, built twice from one description: as a `Predicate<Sample>` for the
/// store and as a `Predicate<PlainSample>` for Foundation's own evaluation over plain values.
indirect enum RandomPredicate: CustomStringConvertible {
    enum IntField: String, CaseIterable {
        case a, b, g, h, code
    }

    enum Op: CaseIterable {
        case eq, ne, lt, le, gt, ge
    }

    case int(IntField, Op, Int)
    case string(Op, String)
    case double(Op, Double)
    case flag(Bool)
    case optionalEquals(Int?)
    case optionalCoalesced(Op, Int)
    /// `opt != nil && opt! op v`
    case optionalUnwrapped(Op, Int)
    /// `if let o = opt { o op v } else { false }`
    case optionalIfLet(Op, Int)
    case among(IntField, [Int])
    case prefix(String)
    case sum(Op, Int)
    case and(RandomPredicate, RandomPredicate)
    case or(RandomPredicate, RandomPredicate)
    case not(RandomPredicate)

    var description: String {
        switch self {
        case .int(let f, let op, let v): return "\(f) \(op) \(v)"
        case .string(let op, let v): return "s \(op) \(v)"
        case .double(let op, let v): return "d \(op) \(v)"
        case .flag(let b): return b ? "flag" : "!flag"
        case .optionalEquals(let v): return "opt == \(v.map(String.init) ?? "nil")"
        case .optionalCoalesced(let op, let v): return "(opt ?? -1) \(op) \(v)"
        case .optionalUnwrapped(let op, let v): return "opt != nil && opt! \(op) \(v)"
        case .optionalIfLet(let op, let v): return "if let o = opt { o \(op) \(v) } else { false }"
        case .among(let f, let vs): return "\(f) IN \(vs)"
        case .prefix(let p): return "s starts with \(p)"
        case .sum(let op, let v): return "a + b \(op) \(v)"
        case .and(let l, let r): return "(\(l) && \(r))"
        case .or(let l, let r): return "(\(l) || \(r))"
        case .not(let e): return "!(\(e))"
        }
    }

    static func random(depth: Int, _ rng: inout SeededRandom) -> RandomPredicate {
        if depth > 0 && Int.random(in: 0..<3, using: &rng) == 0 {
            switch Int.random(in: 0..<5, using: &rng) {
            case 0, 1: return .and(random(depth: depth - 1, &rng), random(depth: depth - 1, &rng))
            case 2, 3: return .or(random(depth: depth - 1, &rng), random(depth: depth - 1, &rng))
            default: return .not(random(depth: depth - 1, &rng))
            }
        }
        let op = Op.allCases.randomElement(using: &rng)!
        let field = IntField.allCases.randomElement(using: &rng)!
        let range: ClosedRange<Int> = [.a: 0...100, .b: 0...10, .g: 0...10, .h: 0...100, .code: 0...10_100][field]!
        switch Int.random(in: 0..<14, using: &rng) {
        case 0, 1, 2: return .int(field, op, Int.random(in: range, using: &rng))
        case 3: return .string(op, "k\(Int.random(in: 0..<55, using: &rng))")
        case 4: return .double(op, Double(Int.random(in: 0..<1000, using: &rng)) / 10)
        case 5: return .flag(Bool.random(using: &rng))
        case 6: return .optionalEquals(Bool.random(using: &rng) ? nil : Int.random(in: 0..<20, using: &rng))
        case 7: return .optionalCoalesced(op, Int.random(in: -1..<20, using: &rng))
        case 8: return .prefix("k\(Int.random(in: 0..<6, using: &rng))")
        case 9: return .sum(op, Int.random(in: 0...110, using: &rng))
        case 10: return .optionalUnwrapped(op, Int.random(in: -1..<20, using: &rng))
        case 11: return .optionalIfLet(op, Int.random(in: -1..<20, using: &rng))
        default:
            let count = Int.random(in: 1...6, using: &rng)
            return .among(field, (0..<count).map { _ in Int.random(in: range, using: &rng) })
        }
    }
}

/// The key paths one root type offers to the builder.
struct SampleKeyPaths<Root>: Sendable {
    typealias Path<V> = any KeyPath<Root, V> & Sendable
    var int: [RandomPredicate.IntField: Path<Int>]
    var s: Path<String>
    var d: Path<Double>
    var flag: Path<Bool>
    var opt: Path<Int?>
}

typealias BoolExpression = any StandardPredicateExpression<Bool>

/// `l && r` of two type-erased predicate expressions (the random-predicate suites' terms build with these).
func conjunction(_ l: BoolExpression, _ r: BoolExpression) -> BoolExpression {
    func open<L: StandardPredicateExpression<Bool>, R: StandardPredicateExpression<Bool>>(
        _ l: L, _ r: R
    )
        -> BoolExpression
    { PredicateExpressions.Conjunction(lhs: l, rhs: r) }
    return open(l, r)
}

/// `l || r` of two type-erased predicate expressions.
func disjunction(_ l: BoolExpression, _ r: BoolExpression) -> BoolExpression {
    func open<L: StandardPredicateExpression<Bool>, R: StandardPredicateExpression<Bool>>(
        _ l: L, _ r: R
    )
        -> BoolExpression
    { PredicateExpressions.Disjunction(lhs: l, rhs: r) }
    return open(l, r)
}

/// `!e` of a type-erased predicate expression.
func negation(_ e: BoolExpression) -> BoolExpression {
    func open<E: StandardPredicateExpression<Bool>>(_ e: E) -> BoolExpression { PredicateExpressions.Negation(e) }
    return open(e)
}

extension RandomPredicate {
    func predicate<Root>(_ paths: SampleKeyPaths<Root>) -> Predicate<Root> {
        Predicate<Root> { root in build(root, paths) }
    }

    private func build<Root>(_ root: PredicateExpressions.Variable<Root>, _ p: SampleKeyPaths<Root>) -> BoolExpression {
        func key<V>(
            _ path: any KeyPath<Root, V> & Sendable
        )
            -> PredicateExpressions.KeyPath<PredicateExpressions.Variable<Root>, V>
        {
            PredicateExpressions.KeyPath(root: root, keyPath: path)
        }
        switch self {
        case .int(let f, let op, let v): return Self.compare(key(p.int[f]!), op, PredicateExpressions.Value(v))
        case .string(let op, let v): return Self.compare(key(p.s), op, PredicateExpressions.Value(v))
        case .double(let op, let v): return Self.compare(key(p.d), op, PredicateExpressions.Value(v))
        case .flag(true): return key(p.flag)
        case .flag(false): return PredicateExpressions.Negation(key(p.flag))
        case .optionalEquals(let v):
            return PredicateExpressions.Equal(lhs: key(p.opt), rhs: PredicateExpressions.Value(v))
        case .optionalCoalesced(let op, let v):
            let coalesced = PredicateExpressions.NilCoalesce(lhs: key(p.opt), rhs: PredicateExpressions.Value(-1))
            return Self.compare(coalesced, op, PredicateExpressions.Value(v))
        case .optionalUnwrapped(let op, let v):
            let present = PredicateExpressions.NotEqual(lhs: key(p.opt), rhs: PredicateExpressions.NilLiteral<Int>())
            let test = Self.compare(PredicateExpressions.ForcedUnwrap(key(p.opt)), op, PredicateExpressions.Value(v))
            return conjunction(present, test)
        case .optionalIfLet(let op, let v):
            func ifLet<T: StandardPredicateExpression<Bool>>(
                _ test: (PredicateExpressions.Variable<Int>) -> T
            ) -> BoolExpression {
                PredicateExpressions.NilCoalesce(
                    lhs: PredicateExpressions.OptionalFlatMap(key(p.opt), test), rhs: PredicateExpressions.Value(false))
            }
            let value = PredicateExpressions.Value(v)
            switch op {
            case .eq: return ifLet { PredicateExpressions.Equal(lhs: $0, rhs: value) }
            case .ne: return ifLet { PredicateExpressions.NotEqual(lhs: $0, rhs: value) }
            case .lt: return ifLet { PredicateExpressions.Comparison(lhs: $0, rhs: value, op: .lessThan) }
            case .le: return ifLet { PredicateExpressions.Comparison(lhs: $0, rhs: value, op: .lessThanOrEqual) }
            case .gt: return ifLet { PredicateExpressions.Comparison(lhs: $0, rhs: value, op: .greaterThan) }
            case .ge: return ifLet { PredicateExpressions.Comparison(lhs: $0, rhs: value, op: .greaterThanOrEqual) }
            }
        case .among(let f, let vs):
            return PredicateExpressions.SequenceContains(
                sequence: PredicateExpressions.Value(vs), element: key(p.int[f]!))
        case .prefix(let prefix):
            return PredicateExpressions.SequenceStartsWith(base: key(p.s), prefix: PredicateExpressions.Value(prefix))
        case .sum(let op, let v):
            let sum = PredicateExpressions.Arithmetic(lhs: key(p.int[.a]!), rhs: key(p.int[.b]!), op: .add)
            return Self.compare(sum, op, PredicateExpressions.Value(v))
        case .and(let l, let r): return conjunction(l.build(root, p), r.build(root, p))
        case .or(let l, let r): return disjunction(l.build(root, p), r.build(root, p))
        case .not(let e): return negation(e.build(root, p))
        }
    }

    private static func compare<L: StandardPredicateExpression, R: StandardPredicateExpression>(
        _ lhs: L, _ op: Op, _ rhs: R
    ) -> BoolExpression where L.Output == R.Output, L.Output: Comparable & Codable & Sendable {
        switch op {
        case .eq: return PredicateExpressions.Equal(lhs: lhs, rhs: rhs)
        case .ne: return PredicateExpressions.NotEqual(lhs: lhs, rhs: rhs)
        case .lt: return PredicateExpressions.Comparison(lhs: lhs, rhs: rhs, op: .lessThan)
        case .le: return PredicateExpressions.Comparison(lhs: lhs, rhs: rhs, op: .lessThanOrEqual)
        case .gt: return PredicateExpressions.Comparison(lhs: lhs, rhs: rhs, op: .greaterThan)
        case .ge: return PredicateExpressions.Comparison(lhs: lhs, rhs: rhs, op: .greaterThanOrEqual)
        }
    }

}

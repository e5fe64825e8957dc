import Foundation
import TrellisCore
import TrellisGraph
import TrellisJournal

/// A value computed over the matches of a fetch: count, sum, average, minimum or maximum of an attribute.
///
/// ```swift
/// let rows = try context.aggregate(
///     FetchDescriptor<Chore>(predicate: #Predicate { !$0.done }),
///     [.count, .sum(\.estimate), .max(\.due)], groupBy: [\.done])
/// print(rows[0].group["done"]!, rows[0]["sum(estimate)"]!)
/// ```
public struct Aggregate<T: Model>: Sendable {
    let function: AggregateFunction
    let keyPath: KeyPathKey?

    /// The number of matching objects.
    public static var count: Aggregate { Aggregate(function: .count, keyPath: nil) }
    /// The sum of an attribute's non-null values: an integer for integer attributes, an exact decimal for `Decimal`
    /// ones, else a double.
    public static func sum(_ keyPath: PartialKeyPath<T>) -> Aggregate {
        Aggregate(function: .sum, keyPath: .init(keyPath))
    }
    /// The mean of an attribute's non-null values, as a double, or a decimal for `Decimal` attributes (null when there
    /// are none).
    public static func average(_ keyPath: PartialKeyPath<T>) -> Aggregate {
        Aggregate(function: .average, keyPath: .init(keyPath))
    }
    /// The least non-null value of an attribute, in the store's value order.
    public static func min(_ keyPath: PartialKeyPath<T>) -> Aggregate {
        Aggregate(function: .min, keyPath: .init(keyPath))
    }
    /// The greatest non-null value of an attribute.
    public static func max(_ keyPath: PartialKeyPath<T>) -> Aggregate {
        Aggregate(function: .max, keyPath: .init(keyPath))
    }
}

/// One group of an aggregate fetch: the grouping attributes' values and each aggregate's result, by name
/// (`count`, `sum(estimate)`, `average(estimate)`, `min(due)`, `max(due)`).
///
/// ```swift
/// for row in try context.aggregate(FetchDescriptor<Chore>(), [.count], groupBy: [\.done]) {
///     print(row.group["done"]!, row["count"]!)      // false 12, then true 30
/// }
/// ```
public struct AggregateRow: Sendable, Equatable {
    /// The values of the grouping properties for this row, by name; empty without grouping.
    public let group: [String: Value]
    /// The aggregate values, by the names they were given.
    public let values: [String: Value]

    /// The aggregate value named `name`, or nil.
    public subscript(name: String) -> Value? { values[name] }
}

extension ModelContext {
    /// Aggregates over the matches of a fetch (pending changes included, pending deletes left out), one row per
    /// distinct combination of the `groupBy` attributes in ascending order (one row in all without grouping).
    /// Sort, offset and limit of the descriptor choose which objects are aggregated.
    /// - Complexity: O(m × (a + g)) after the fetch, for m matches, a aggregates and g grouping attributes; counts
    ///   alone without grouping cost what `fetchCount(_:)` does.
    public func aggregate<T: Model>(
        _ descriptor: FetchDescriptor<T>, _ aggregates: [Aggregate<T>], groupBy: [PartialKeyPath<T>] = []
    ) throws -> [AggregateRow] {
        let binding = binding(for: T.self)
        let groups = try groupBy.map { try attributeColumn($0, binding) }
        let columns = try aggregates.map { aggregate -> (String, Int?) in
            guard let keyPath = aggregate.keyPath?.keyPath as? PartialKeyPath<T> else { return ("count", nil) }
            let (name, a) = try attributeColumn(keyPath, binding)
            return ("\(aggregate.function.rawValue)(\(name))", a)
        }
        if groups.isEmpty && !aggregates.isEmpty && aggregates.allSatisfy({ $0.function == .count }) {
            // Counts alone need no IDs: the count path uses index bounds or column masks when it can.
            let n = Value.int(Int64(try fetchCount(descriptor)))
            return [AggregateRow(group: [:], values: ["count": n])]
        }
        let view = self.view
        var accumulators: [[Value]: [Accumulator]] = [:]
        for id in try fetchIdentifiers(descriptor) {
            let key = groups.map { view.value(id, $0.1) ?? .null }
            var row = accumulators[key] ?? aggregates.map { Accumulator(function: $0.function) }
            for (i, (_, a)) in columns.enumerated() {
                row[i].add(a.map { view.value(id, $0) ?? .null } ?? .null)
            }
            accumulators[key] = row
        }
        if accumulators.isEmpty && groups.isEmpty {
            accumulators[[]] = aggregates.map { Accumulator(function: $0.function) }
        }
        return accumulators.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { key, row in
            AggregateRow(
                group: Dictionary(uniqueKeysWithValues: zip(groups.map(\.0), key)),
                values: Dictionary(zip(columns.map(\.0), row.map(\.result)), uniquingKeysWith: { a, _ in a }))
        }
    }
}

enum AggregateFunction: String, Sendable {
    case count, sum, average, min, max
}

/// The running state of one aggregate.
private struct Accumulator {
    let function: AggregateFunction
    var count = 0
    var intSum: Int64 = 0
    var doubleSum = 0.0
    var allInts = true
    /// Decimals are summed exactly, as decimals (an attribute holds one type, so they are never mixed with others).
    var decimalSum = Decimal(0)
    var anyDecimal = false
    var extreme: Value?

    init(function: AggregateFunction) { self.function = function }

    mutating func add(_ value: Value) {
        if function == .count {
            count += 1
            return
        }
        guard !value.isNull else { return }
        count += 1
        switch function {
        case .sum, .average:
            if case .int(let i) = value {
                intSum = intSum &+ i
                doubleSum += Double(i)
            } else if case .decimal(let d) = value {
                allInts = false
                anyDecimal = true
                decimalSum += d
            } else {
                allInts = false
                doubleSum += value.doubleValue ?? 0
            }
        case .min: if extreme.map({ value < $0 }) ?? true { extreme = value }
        case .max: if extreme.map({ value > $0 }) ?? true { extreme = value }
        case .count: break
        }
    }

    var result: Value {
        switch function {
        case .count: return .int(Int64(count))
        case .sum: return anyDecimal ? .decimal(decimalSum) : allInts ? .int(intSum) : .double(doubleSum)
        case .average:
            if count == 0 { return .null }
            return anyDecimal ? .decimal(decimalSum / Decimal(count)) : .double(doubleSum / Double(count))
        case .min, .max: return extreme ?? .null
        }
    }
}

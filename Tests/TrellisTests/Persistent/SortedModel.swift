@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// The reference a `SortedTree` is checked against: a sorted array of keys beside a dictionary of values, with range
/// arithmetic done by plain binary search.
struct SortedModel {
    private(set) var keys: [Int] = []
    private(set) var values: [Int: Int] = [:]

    var count: Int { keys.count }

    subscript(key: Int) -> Int? { values[key] }

    /// The first position whose key is not below `key`.
    func lowerBound(_ key: Int) -> Int {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The first position whose key is above `key`.
    func upperBound(_ key: Int) -> Int {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle] <= key { low = middle + 1 } else { high = middle }
        }
        return low
    }

    mutating func updateValue(_ value: Int, forKey key: Int) -> Int? {
        if values[key] == nil { keys.insert(key, at: lowerBound(key)) }
        return values.updateValue(value, forKey: key)
    }

    mutating func removeValue(forKey key: Int) -> Int? {
        guard let removed = values.removeValue(forKey: key) else { return nil }
        keys.remove(at: lowerBound(key))
        return removed
    }

    /// The positions of the keys in a range, with the meaning `SortedTree.count(from:inclusive:to:inclusive:)` gives
    /// its arguments.
    func positions(
        from lower: Int?, inclusive lowerInclusive: Bool, to upper: Int?, inclusive upperInclusive: Bool
    )
        -> Range<Int>
    {
        let start = lower.map { lowerInclusive ? lowerBound($0) : upperBound($0) } ?? 0
        let end = upper.map { upperInclusive ? upperBound($0) : lowerBound($0) } ?? keys.count
        return start..<Swift.max(start, end)
    }

    /// The entries in a range, ascending or descending.
    func elements(
        from lower: Int?,
        inclusive lowerInclusive: Bool,
        to upper: Int?,
        inclusive upperInclusive: Bool,
        reverse: Bool
    ) -> [(key: Int, value: Int)] {
        let range = positions(from: lower, inclusive: lowerInclusive, to: upper, inclusive: upperInclusive)
        let entries = keys[range].map { (key: $0, value: values[$0]!) }
        return reverse ? entries.reversed() : entries
    }

    /// Whether a sequence of entries is exactly `expected`, in order.
    static func same(_ actual: some Sequence<(key: Int, value: Int)>, _ expected: [(key: Int, value: Int)]) -> Bool {
        actual.elementsEqual(expected) { $0.key == $1.key && $0.value == $1.value }
    }

    /// Whether the tree holds exactly the model's entries: iteration, `forEach`, `first` and `last` agree.
    static func matches(_ tree: SortedTree<Int, Int>, _ model: SortedModel) -> Bool {
        let all = model.elements(from: nil, inclusive: true, to: nil, inclusive: false, reverse: false)
        var visited = 0
        var inOrder = true
        tree.forEach { key, value in
            inOrder = inOrder && visited < all.count && all[visited].key == key && all[visited].value == value
            visited += 1
        }
        return tree.count == model.count && same(tree, all) && inOrder && visited == all.count
            && tree.first?.key == all.first?.key && tree.last?.key == all.last?.key
    }
}

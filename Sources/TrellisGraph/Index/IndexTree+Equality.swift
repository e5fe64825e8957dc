import TrellisCore

extension IndexTree {
    /// The first place, in index order, where this index's entries differ from `other`'s (indexed values, identical
    /// to the bit; serials; order; count), or nil when they are the same.
    /// - Complexity: O(n).
    func firstDifference(from other: IndexTree) -> String? {
        switch (self, other) {
        case (.scalar(let mine, _), .scalar(let theirs, _)):
            return Self.firstDifference(mine.lazy.map(\.key), theirs.lazy.map(\.key))
        case (.pair(let mine, _, _), .pair(let theirs, _, _)):
            return Self.firstDifference(mine.lazy.map(\.key), theirs.lazy.map(\.key))
        case (.general(let mine), .general(let theirs)):
            return Self.firstDifference(mine.lazy.map(\.key), theirs.lazy.map(\.key))
        default:
            return "indexes of different kinds (scalar, pair, general)"
        }
    }

    /// The first place where this index differs from the entries its rows call for, `expected` in ascending order.
    /// - Complexity: O(n).
    func firstDifference(fromEntries expected: [IndexEntry]) -> String? {
        switch self {
        case .scalar(let mine, let coding):
            let theirs = expected.map { ScalarEntry(bits: coding.encode($0.first) ?? 0, serial: $0.serial) }
            return Self.firstDifference(mine.lazy.map(\.key), theirs)
        case .pair(let mine, let a, let b):
            let theirs = expected.map {
                PairEntry(
                    first: a.encode($0.first) ?? 0, second: b.encode($0.rest.first ?? .null) ?? 0, serial: $0.serial)
            }
            return Self.firstDifference(mine.lazy.map(\.key), theirs)
        case .general(let mine):
            return Self.firstDifference(mine.lazy.map(\.key), expected)
        }
    }

    private static func firstDifference<Key: IndexKey>(
        _ mine: some Sequence<Key>, _ theirs: some Sequence<Key>
    ) -> String? {
        var other = theirs.makeIterator()
        var position = 0
        for x in mine {
            guard let y = other.next() else { return "entry \(position), \(x.described), only in this index" }
            if !x.isIdentical(to: y) { return "entry \(position): \(x.described) vs \(y.described)" }
            position += 1
        }
        if let y = other.next() { return "entry \(position), \(y.described), only in the other index" }
        return nil
    }
}

/// An index entry as the comparisons above see it.
private protocol IndexKey {
    /// The same serial and indexed values, identical to the bit.
    func isIdentical(to other: Self) -> Bool
    var described: String { get }
}

extension ScalarEntry: IndexKey {
    fileprivate func isIdentical(to other: ScalarEntry) -> Bool { bits == other.bits && serial == other.serial }
    fileprivate var described: String { "serial \(serial) (bits \(String(bits, radix: 16)))" }
}

extension PairEntry: IndexKey {
    fileprivate func isIdentical(to other: PairEntry) -> Bool {
        first == other.first && second == other.second && serial == other.serial
    }
    fileprivate var described: String {
        "serial \(serial) (bits \(String(first, radix: 16)), \(String(second, radix: 16)))"
    }
}

extension IndexEntry: IndexKey {
    fileprivate func isIdentical(to other: IndexEntry) -> Bool {
        serial == other.serial && first.isIdentical(to: other.first) && rest.count == other.rest.count
            && zip(rest, other.rest).allSatisfy { $0.isIdentical(to: $1) }
    }
    fileprivate var described: String {
        "serial \(serial) (\(([first] + rest).map { "\($0)" }.joined(separator: ", ")))"
    }
}

/// An index key for two required numbers, dates or booleans (an index `.on("score", "id")`): both values encoded as a
/// `ScalarEntry`'s are, then the serial. Twenty-four bytes, trivially copyable, compared with at most three integer
/// comparisons, where a general `IndexEntry` for the same key holds an array for its second value.
package struct PairEntry: Comparable, Sendable, BitwiseCopyable {
    var first: UInt64
    var second: UInt64
    package var serial: UInt64

    package static func < (lhs: PairEntry, rhs: PairEntry) -> Bool {
        if lhs.first != rhs.first { return lhs.first < rhs.first }
        if lhs.second != rhs.second { return lhs.second < rhs.second }
        return lhs.serial < rhs.serial
    }
}

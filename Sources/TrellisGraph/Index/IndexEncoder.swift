import TrellisCore

/// How an index makes its entries, without holding its tree (so recording changes leaves the tree uniquely held).
struct IndexEncoder: Sendable {
    /// The coding of a scalar index, or of a pair index's first value; nil for a general one.
    let coding: ScalarCoding?
    /// The coding of a pair index's second value; nil for any other index.
    var second: ScalarCoding? = nil
    /// Whether the index holds a collection attribute's elements (one entry per distinct element).
    var elements = false
    /// Whether those elements are a dictionary's key–value pairs.
    var pairs = false

    /// Records in `changes` the entry `IndexTree.update(columns, serial:, adding:, value:)` would add or remove.
    func record(
        _ columns: [Int], serial: UInt64, adding: Bool, into changes: inout IndexChanges, value: (Int) -> Value
    ) {
        if elements {
            for entry in IndexEntry.elementEntries(value(columns[0]), serial: serial, pairs: pairs) {
                changes.general.append((entry, adding))
            }
        } else if let coding, let second {
            let entry = PairEntry(
                first: coding.encode(value(columns[0])) ?? 0, second: second.encode(value(columns[1])) ?? 0,
                serial: serial)
            changes.pair.append((entry, adding))
        } else if let coding {
            // A value of the wrong case cannot reach a scalar index: commits check types first.
            let entry = ScalarEntry(bits: coding.encode(value(columns[0])) ?? 0, serial: serial)
            changes.scalar.append((entry, adding))
        } else {
            changes.general.append((IndexEntry(columns.map(value), serial: serial), adding))
        }
    }
}

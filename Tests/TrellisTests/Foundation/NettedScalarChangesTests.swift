import Testing

@testable import TrellisCore
@testable import TrellisGraph

/// `IndexTree.netted` for scalar entries sorts a batch of 256 changes or more by radix on the encoded value (8-bit
/// digits below 16,384 changes, 11-bit from there), skipping the digits every change shares, and then by serial
/// within each value. These tests hold it to the definition: one change per entry, the last one made to it, in
/// ascending entry order.
@Suite struct NettedScalarChangesTests {
    /// The definition, computed the slow way: the last change to each entry wins; entries in ascending order.
    private static func reference<Entry: Comparable>(_ changes: [(entry: Entry, adding: Bool)]) -> [(Entry, Bool)] {
        let ordered = changes.enumerated().sorted {
            $0.element.entry != $1.element.entry ? $0.element.entry < $1.element.entry : $0.offset < $1.offset
        }
        var out: [(Entry, Bool)] = []
        for (_, change) in ordered {
            if let last = out.last, last.0 == change.entry {
                out[out.count - 1].1 = change.adding
            } else {
                out.append((change.entry, change.adding))
            }
        }
        return out
    }

    private static func netted(_ changes: [(entry: ScalarEntry, adding: Bool)]) -> [(ScalarEntry, Bool)] {
        IndexTree.netted(changes).map { ($0.key, $0.value != nil) }
    }

    /// Value distributions that make different sets of digits vary, so that the sort runs 0, 1, 2, 3 or all its
    /// passes: every byte, only the low ones, one middle byte, the low three bytes, none (all equal), and the encoded
    /// doubles of a score column.
    private static let distributions: [(name: String, draw: @Sendable (inout SeededRandom) -> UInt64)] = [
        ("any 64 bits", { $0.next() }),
        ("small integers", { $0.next() % 600 }),
        ("one middle byte", { 0x1234_0000_0000_5678 | ($0.next() % 256) << 24 }),
        ("24 low bits, three passes", { $0.next() >> 40 }),
        ("one value", { _ in 0xdead_beef }),
        ("encoded doubles", { ScalarCoding.encode(Double($0.next() % 10_000) / 7 - 500) }),
    ]

    @Test(arguments: [255, 256, 257, 1_000, 1_024, 16_383, 16_384, 40_000])
    func nettingMatchesTheDefinitionForEveryKindOfValue(count: Int) {
        for (d, distribution) in Self.distributions.enumerated() {
            var random = SeededRandom(seed: UInt64(count * 31 + d))
            var changes: [(entry: ScalarEntry, adding: Bool)] = []
            while changes.count < count {
                // Few serials, so the same entry comes back, added and removed, in any order.
                let serial = random.next() % UInt64(count / 3 + 1) + 1
                let entry = ScalarEntry(bits: distribution.draw(&random), serial: serial)
                changes.append((entry, random.next() % 3 != 0))
                if random.next() % 8 == 0, changes.count < count { changes.append((entry, !changes.last!.adding)) }
            }
            #expect(changes.count == count)
            let expected = Self.reference(changes)
            let got = Self.netted(changes)
            #expect(got.count == expected.count, "\(distribution.name), \(count) changes")
            #expect(
                zip(got, expected).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 },
                "\(distribution.name), \(count) changes: the netted changes differ from the definition")
        }
    }

    /// A batch whose entries repeat with the opposite change, where only the input order says which one wins.
    @Test func theLaterOfTwoChangesToOneEntryWins() {
        var changes: [(entry: ScalarEntry, adding: Bool)] = []
        for k in 0..<600 { changes.append((ScalarEntry(bits: UInt64(k % 10), serial: UInt64(k % 40)), true)) }
        for k in stride(from: 599, through: 0, by: -1) where k % 2 == 0 {
            changes.append((ScalarEntry(bits: UInt64(k % 10), serial: UInt64(k % 40)), false))
        }
        let got = Self.netted(changes)
        let expected = Self.reference(changes)
        #expect(got.count == expected.count)
        #expect(zip(got, expected).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 })
        // Entries with an even k were removed last; the odd ones stay added.
        #expect(got.allSatisfy { $0.1 == ($0.0.serial % 2 == 1) })
    }

    /// Pair entries net the same way, sorted by radix on their first value: runs of equal first values (few of them
    /// here, so runs are long) are ordered by the second value and the serial, and the later change to an entry wins.
    @Test(arguments: [255, 300, 5_000, 16_384, 40_000])
    func pairNettingMatchesTheDefinition(count: Int) {
        var random = SeededRandom(seed: UInt64(count))
        var changes: [(entry: PairEntry, adding: Bool)] = []
        while changes.count < count {
            let entry = PairEntry(
                first: random.next() % 7 == 0 ? random.next() : random.next() % 50, second: random.next() % 20,
                serial: random.next() % UInt64(count / 4 + 1) + 1)
            changes.append((entry, random.next() % 3 != 0))
            if random.next() % 8 == 0, changes.count < count { changes.append((entry, !changes.last!.adding)) }
        }
        let expected = Self.reference(changes)
        let got = IndexTree.netted(changes).map { ($0.key, $0.value != nil) }
        #expect(got.count == expected.count, "\(count) changes")
        #expect(zip(got, expected).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }, "\(count) changes")
    }
}

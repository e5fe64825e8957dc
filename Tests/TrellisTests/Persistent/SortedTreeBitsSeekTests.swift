import Testing

@testable import TrellisCore
@testable import TrellisGraph

/// Issue 21: an equality lookup in a scalar index (`Snapshot.lookup`, unique checks) finds the first key whose bits
/// are not below the probe's by comparing bits alone (`SortedTree.firstKey(bitsNotBelow:)`). These tests prove it
/// answers what the general seek and a sorted-array model answer, in trees of every shape: built in bulk, grown by
/// inserts, holding a pending run, shrunk by removals, with many keys sharing their bits, and at the ends of `UInt64`.
@Suite("SortedTree seek by bits against the general seek and a model")
struct SortedTreeBitsSeekTests {
    /// The model's answer: the first key (in (bits, serial) order) whose bits are at least `bits`.
    static func expected(_ model: [ScalarEntry], _ bits: UInt64) -> ScalarEntry? {
        model.first { $0.bits >= bits }
    }

    /// Checks `firstKey(bitsNotBelow:)` for `bits` against the model and the general seek.
    static func check(
        _ tree: SortedTree<ScalarEntry, Void>, _ model: [ScalarEntry], _ bits: UInt64, _ label: String
    ) throws {
        let found = tree.firstKey(bitsNotBelow: bits)
        let want = expected(model, bits)
        try #require(found?.bits == want?.bits && found?.serial == want?.serial, "\(label): bits \(bits)")
        let general = tree.firstEntry(notBelow: ScalarEntry(bits: bits, serial: 0))?.key
        try #require(found?.bits == general?.bits && found?.serial == general?.serial, "\(label): general seek")
    }

    /// A value from a small range, so that keys share their bits (a non-unique index), or near either end of
    /// `UInt64`.
    static func randomBits(_ random: inout SeededRandom, space: UInt64) -> UInt64 {
        switch random.next() % 10 {
        case 0: return UInt64.max - random.next() % 3
        case 1: return random.next() % 3
        default: return 1_000 + random.next() % space
        }
    }

    @Test(
        "20,000 random inserts (buffered and not) and removals agree with the model, probed at and between keys",
        arguments: [4, 5, 16, SortedTree<ScalarEntry, Void>.defaultFanout])
    func mutatedTreesAgree(fanout: Int) throws {
        var random = SeededRandom(seed: 0xB175 &+ UInt64(fanout))
        var tree = SortedTree<ScalarEntry, Void>(fanout: fanout)
        var model: [ScalarEntry] = []
        var kept: [(SortedTree<ScalarEntry, Void>, [ScalarEntry])] = []
        var sawPending = false
        for step in 1...20_000 {
            let bits = Self.randomBits(&random, space: 600)
            let entry = ScalarEntry(bits: bits, serial: 1 + random.next() % 8)
            let position = model.firstIndex { !($0 < entry) } ?? model.count
            let held = position < model.count && model[position] == entry
            switch random.next() % 10 {
            case 0..<4:
                tree.insertBuffered((), forKey: entry, limit: 8)
                if !held { model.insert(entry, at: position) }
            case 4..<6:
                _ = tree.updateValue((), forKey: entry)
                if !held { model.insert(entry, at: position) }
            case 6..<8:
                _ = tree.removeValue(forKey: entry)
                if held { model.remove(at: position) }
            default:
                // A probe at a held key's bits, at a bits value no key holds, and one past the largest.
                if let some = model.randomElement(using: &random) {
                    try Self.check(tree, model, some.bits, "step \(step), held")
                }
                try Self.check(tree, model, Self.randomBits(&random, space: 700), "step \(step), random")
                if let last = model.last, last.bits < .max {
                    try Self.check(tree, model, last.bits + 1, "step \(step), past the end")
                }
            }
            if tree.pendingCount > 0 { sawPending = true }
            if step % 2_000 == 0 { kept.append((tree, model)) }
        }
        #expect(sawPending, "some probes met a pending run")
        #expect(model.count > 100, "the tree held enough keys to have levels (\(model.count))")
        // Kept copies still answer as they did when kept.
        for (k, (copy, copyModel)) in kept.enumerated() {
            for bits in [0, 1, 1_000, 1_300, 1_599, .max - 1, .max] as [UInt64] {
                try Self.check(copy, copyModel, bits, "copy \(k)")
            }
        }
    }

    @Test("bulk-built trees, every probe from below the first key to past the last", arguments: [4, 16, 64])
    func bulkBuiltTreesAgree(fanout: Int) throws {
        for count in [0, 1, 3, 4, 5, 7, 8, 63, 64, 65, 257, 4_099] {
            // Runs of one to three keys with the same bits, at every other bits value.
            var model: [ScalarEntry] = []
            var bits: UInt64 = 10
            while model.count < count {
                for serial in 1...(1 + bits % 3) where model.count < count {
                    model.append(ScalarEntry(bits: bits, serial: serial))
                }
                bits += 2
            }
            let tree = SortedTree<ScalarEntry, Void>(
                ascendingKeys: ContiguousArray(model), values: ContiguousArray(repeating: (), count: model.count),
                fanout: fanout)
            for probe in 0...(bits + 2) {
                try Self.check(tree, model, probe, "\(count) keys, fan-out \(fanout)")
            }
        }
    }

    /// Another holder of the same bits is found before or after the object's own entry, in the pending run and in the
    /// nodes.
    @Test("the unique-conflict probe finds another holder of the same bits", arguments: [false, true])
    func conflictsAreFound(folded: Bool) throws {
        // Fan-out 4 and 200 other keys around them give the tree levels; `folded` moves every key into the nodes.
        var tree = SortedTree<ScalarEntry, Void>(fanout: 4)
        for bits: UInt64 in (0..<100).map({ $0 * 2 }) where bits != 42 {
            tree.insertBuffered((), forKey: ScalarEntry(bits: bits, serial: 100 + bits))
            tree.insertBuffered((), forKey: ScalarEntry(bits: bits + 1, serial: 101 + bits))
        }
        for serial: UInt64 in [3, 5, 9] { tree.insertBuffered((), forKey: ScalarEntry(bits: 42, serial: serial)) }
        tree.insertBuffered((), forKey: ScalarEntry(bits: 44, serial: .max))
        tree.insertBuffered((), forKey: ScalarEntry(bits: 500, serial: .max))
        if folded { tree.foldPending() }
        #expect(folded ? tree.pendingCount == 0 : tree.pendingCount > 0)
        #expect(tree.root != nil, "the tree has nodes")
        #expect(IndexTree.conflict(bits: 42, serial: 3, in: tree) == 5, "the next holder after the object's own")
        #expect(IndexTree.conflict(bits: 42, serial: 5, in: tree) == 3, "the first holder, before the object's own")
        #expect(IndexTree.conflict(bits: 42, serial: 7, in: tree) == 3, "a serial that holds no entry")
        #expect(IndexTree.conflict(bits: 41, serial: 141, in: tree) == nil, "the object alone holds its bits")
        #expect(IndexTree.conflict(bits: 44, serial: 144, in: tree) == .max, "another holder with the largest serial")
        #expect(IndexTree.conflict(bits: 44, serial: .max, in: tree) == 144, "the largest serial's own entry skipped")
        #expect(IndexTree.conflict(bits: 500, serial: .max, in: tree) == nil, "the largest serial alone holds its bits")
        #expect(IndexTree.conflict(bits: 600, serial: 7, in: tree) == nil, "no key holds these bits")
        #expect(IndexTree.first(equalTo: 42, in: tree) == 3)
        #expect(IndexTree.first(equalTo: 44, in: tree) == 144)
        #expect(IndexTree.first(equalTo: 199, in: tree) == 299)
        #expect(IndexTree.first(equalTo: 200, in: tree) == nil)
    }
}

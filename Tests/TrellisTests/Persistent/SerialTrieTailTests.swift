import Testing

@testable import TrellisCore
@testable import TrellisGraph

/// Issue 21: a `SerialTrie` written through `modifyKeepingTail` keeps its largest key beside the nodes, so keys
/// written in ascending order copy no node. Lookups, iteration, bounds and removal answer for the tail and the nodes
/// together, and a kept copy never changes.
@Suite("SerialTrie tail against a dictionary model")
struct SerialTrieTailTests {
    @Test("30,000 random writes, mostly ascending, through modifyKeepingTail, modify and removal agree with a model")
    func tailWritesAgreeWithModel() throws {
        var random = SeededRandom(seed: 0x21_7A11)
        var trie = SerialTrie<Int>()
        var model: [UInt64: Int] = [:]
        var next: UInt64 = 0
        var kept: [(trie: SerialTrie<Int>, model: [UInt64: Int])] = []
        var tailWrites = 0
        for step in 1...30_000 {
            let value = Int(truncatingIfNeeded: random.next())
            switch random.below(100) {
            case ..<50:
                // Mostly the newest key or the one after it, as an entity's leaves are written.
                if random.chance(10) { next += UInt64(1 + random.below(200)) }
                let key = random.chance(90) ? next : UInt64(random.below(Int(next) + 1))
                let hadTail = trie.tail?.key == key
                let old = trie.modifyKeepingTail(key, default: { 0 }) { element -> Int in
                    defer { element = value }
                    return element
                }
                #expect(old == model[key] ?? 0, "step \(step)")
                model[key] = value
                if hadTail { tailWrites += 1 }
            case ..<65:
                let key = UInt64(random.below(Int(next) + 300))
                #expect(trie.updateValue(value, forKey: key) == model.updateValue(value, forKey: key))
            case ..<85:
                let key = random.chance(50) ? next : UInt64(random.below(Int(next) + 1))
                #expect(trie.removeValue(forKey: key) == model.removeValue(forKey: key), "step \(step)")
            default:
                let bound = UInt64(random.below(Int(next) + 2))
                let expected = model.keys.filter { $0 >= bound }.sorted()
                try #require(Array(trie.elements(from: bound)).map(\.key) == expected, "step \(step): from \(bound)")
            }
            let probe = random.chance(50) ? next : UInt64(random.below(Int(next) + 2))
            try #require(trie[probe] == model[probe] && trie.contains(probe) == (model[probe] != nil))
            try #require(trie.count == model.count, "step \(step): count")
            if step % 300 == 0 {
                trie.checkInvariants()
                let sorted = model.sorted { $0.key < $1.key }
                try #require(trie.map(\.key) == sorted.map(\.key) && trie.map(\.value) == sorted.map(\.value))
                var walked: [UInt64] = []
                trie.forEach { key, _ in walked.append(key) }
                try #require(walked == sorted.map(\.key))
                try #require(trie.minKey == sorted.first?.key && trie.maxKey == sorted.last?.key)
                kept.append((trie, model))
            }
        }
        #expect(tailWrites > 5_000)
        for version in kept {
            version.trie.checkInvariants()
            #expect(version.trie.map(\.key) == version.model.keys.sorted())
            #expect(version.trie.allSatisfy { version.model[$0.key] == $0.value })
        }
    }

    @Test("ascending writes under a kept copy copy no node while they stay on the tail's key")
    func tailWritesCopyNoNode() {
        var trie = SerialTrie<[Int]>()
        for key in UInt64(0)..<300 { trie.modifyKeepingTail(key, default: { [] }) { $0.append(Int(key)) } }
        #expect(trie.tail?.key == 299 && trie.count == 300)
        let root = trie.root.map(ObjectIdentifier.init)
        let kept = trie
        trie.modifyKeepingTail(299, default: { [] }) { $0.append(-1) }
        #expect(trie.root.map(ObjectIdentifier.init) == root)
        #expect(trie[299] == [299, -1] && kept[299] == [299])
        trie.modifyKeepingTail(300, default: { [] }) { $0.append(300) }
        #expect(trie.tail?.key == 300 && trie[299] == [299, -1] && kept[300] == nil && kept.count == 300)
        trie.checkInvariants()
        kept.checkInvariants()
    }
}

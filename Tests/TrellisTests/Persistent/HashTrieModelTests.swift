import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

@Suite("HashTrie against a Dictionary model")
struct HashTrieModelTests {
    @Test(
        "100,000 random operations on Int keys agree with a Dictionary; kept versions never change",
        arguments: Sharing.allCases)
    func intKeys(sharing: Sharing) throws {
        try Self.run(steps: 100_000, seed: 0xA5_11CE, sharing: sharing) { random in random.below(8_000) }
    }

    @Test(
        "100,000 random operations agree when some keys share three hashes among ordinary ones",
        arguments: Sharing.allCases)
    func mixedCollidingKeys(sharing: Sharing) throws {
        try Self.run(steps: 100_000, seed: 0xB0B, sharing: sharing) { random in MixedKey(id: random.below(6_000)) }
    }

    @Test("100,000 random operations agree when all keys share seven hashes")
    func fewHashes() throws {
        try Self.run(steps: 100_000, seed: 0xC0FFEE, sharing: .shared) { random in FewHashesKey(id: random.below(300)) }
    }

    @Test("100,000 random operations agree when every key has the same full hash")
    func identicalHashes() throws {
        try Self.run(steps: 100_000, seed: 0xD00D, sharing: .shared) { random in SameHashKey(id: random.below(100)) }
    }

    /// Runs `steps` random operations on keys from `nextKey`, checking the trie against a `Dictionary` after every
    /// step for the key touched, and fully every 1,000 steps; every 5,000 steps it keeps a copy of both, and checks
    /// that the kept copies still agree every 25,000 steps and at the end. Shared runs also hold the previous version
    /// through each step and check that it did not change.
    static func run<Key: Hashable>(
        steps: Int,
        seed: UInt64,
        sharing: Sharing,
        key nextKey: (inout SplitMix64) -> Key
    ) throws {
        var random = SplitMix64(seed: seed)
        var trie = HashTrie<Key, Int>()
        var model: [Key: Int] = [:]
        var kept: [(trie: HashTrie<Key, Int>, model: [Key: Int])] = []

        for step in 1...steps {
            let key = nextKey(&random)
            let value = Int(truncatingIfNeeded: random.next())
            let hidden = sharing == .shared ? trie : nil
            let before = model[key]
            let countBefore = model.count

            switch random.below(100) {
            case ..<25:
                try #require(trie.updateValue(value, forKey: key) == model.updateValue(value, forKey: key))
            case ..<33:
                trie[key] = value
                model[key] = value
            case ..<58:
                try #require(trie.removeValue(forKey: key) == model.removeValue(forKey: key))
            case ..<65:
                trie[key] = nil
                model[key] = nil
            case ..<85:
                let result = trie.modify(key, default: { -7 }) { element -> Int in
                    element &+= value
                    return element
                }
                model[key, default: -7] &+= value
                try #require(result == model[key])
            default:
                break
            }

            try #require(trie[key] == model[key], "step \(step): key \(key)")
            try #require(trie.count == model.count, "step \(step): count")
            if let hidden {
                try #require(hidden[key] == before, "step \(step): the hidden copy changed at \(key)")
                try #require(hidden.count == countBefore, "step \(step): the hidden copy's count changed")
            }
            if step % 1_000 == 0 {
                trie.checkInvariants()
                try #require(matches(trie, model), "step \(step): contents")
            }
            if step % 5_000 == 0 { kept.append((trie, model)) }
            if step % 25_000 == 0 {
                for version in kept { try #require(matches(version.trie, version.model)) }
            }
        }
        #expect(kept.count == steps / 5_000)
        for version in kept {
            version.trie.checkInvariants()
            #expect(matches(version.trie, version.model))
        }
    }

    /// Whether iteration and `forEach` both visit exactly the model's pairs, each key once.
    static func matches<Key: Hashable>(_ trie: HashTrie<Key, Int>, _ model: [Key: Int]) -> Bool {
        guard trie.count == model.count else { return false }
        var seen = Set<Key>()
        for (key, value) in trie {
            guard model[key] == value, seen.insert(key).inserted else { return false }
        }
        var visited = 0
        trie.forEach { key, value in
            if model[key] == value { visited += 1 }
        }
        return seen.count == model.count && visited == model.count
    }
}

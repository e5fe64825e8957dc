import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

@Suite("SerialTrie against a Dictionary model")
struct SerialTrieModelTests {
    typealias Model = [UInt64: Int]

    /// Keys at the far end of the key space: they force the root up to its top level, and back down once gone.
    private static func farKeys(_ random: inout SeededRandom) -> [UInt64] {
        let fixed: [UInt64] = [.max, .max - 1, 1 << 63, 1 << 60, (1 << 60) - 1, 1 << 36, (1 << 24) + 5]
        return fixed + (0..<25).map { _ in random.next() | 1 << 40 }
    }

    @Test(
        "100,000 random operations agree with a Dictionary and kept versions never change", arguments: Sharing.allCases)
    func randomOperationsAgreeWithDictionary(sharing: Sharing) throws {
        var random = SeededRandom(seed: 0x5E41_A171)
        let farKeys = Self.farKeys(&random)
        var trie = SerialTrie<Int>()
        var model = Model()
        var kept: [(trie: SerialTrie<Int>, model: Model)] = []

        for step in 1...100_000 {
            // Far keys come and go in alternate phases of 10,000 steps, so the root's height rises and falls.
            let farPhase = step / 10_000 % 2 == 1
            let pick = random.below(100)
            let isFar = pick >= 94
            let key: UInt64 =
                isFar
                ? farKeys[random.below(farKeys.count)]
                : pick < 75 ? UInt64(random.below(3_000)) : UInt64(random.below(12_000))
            let operation = isFar && !farPhase ? 45 : random.below(100)
            let value = Int(truncatingIfNeeded: random.next())
            let hidden = sharing == .shared ? trie : nil
            let before = model[key]
            let countBefore = model.count

            switch operation {
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
                let result = trie.modify(key, default: { 7 }) { element -> Int in
                    element &+= value
                    return element
                }
                model[key, default: 7] &+= value
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
                try #require(Self.matches(trie, model), "step \(step): contents")
                try Self.checkRange(of: trie, from: key)
            }
            if step % 10_000 == 9_999 {
                try #require(trie.height == (farPhase ? SerialTrieNode<Int>.maximumHeight : 2), "step \(step): height")
            }
            if step % 5_000 == 0 { kept.append((trie, model)) }
            if step % 25_000 == 0 {
                for version in kept { try #require(Self.matches(version.trie, version.model)) }
            }
        }
        #expect(kept.count == 20)
        for version in kept {
            version.trie.checkInvariants()
            #expect(Self.matches(version.trie, version.model))
        }
    }

    /// Whether the trie holds exactly the model's pairs, iterating in strictly ascending key order, with the right
    /// smallest and largest keys.
    static func matches(_ trie: SerialTrie<Int>, _ model: Model) -> Bool {
        guard trie.count == model.count else { return false }
        var previous: UInt64?
        for (key, value) in trie {
            if let previous, previous >= key { return false }
            guard model[key] == value else { return false }
            previous = key
        }
        var visited = 0
        trie.forEach { key, value in
            if model[key] == value { visited += 1 }
        }
        return visited == model.count && trie.minKey == model.keys.min() && trie.maxKey == model.keys.max()
    }

    /// `elements(from:)` must yield the full iteration's suffix from `lower` on.
    static func checkRange(of trie: SerialTrie<Int>, from lower: UInt64) throws {
        var actual = trie.elements(from: lower).makeIterator()
        var agrees = true
        for expected in trie where expected.key >= lower {
            let element = actual.next()
            agrees = agrees && element?.key == expected.key && element?.value == expected.value
        }
        try #require(agrees && actual.next() == nil, "elements(from: \(lower))")
    }
}

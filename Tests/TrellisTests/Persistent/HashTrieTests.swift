import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

@Suite("HashTrie")
struct HashTrieTests {
    /// The node structure of a trie, with collision nodes described by their size only (their order is history's).
    static func shape<Key: Hashable, Value>(_ trie: HashTrie<Key, Value>) -> String {
        guard let root = trie.root else { return "empty" }
        return shape(of: root, isRoot: true)
    }

    private static func shape<Key: Hashable, Value>(of node: HashTrieNode<Key, Value>, isRoot: Bool) -> String {
        if !isRoot && node.isCollision { return "C\(node.items.count)" }
        let children = node.children.map { shape(of: $0, isRoot: false) }.joined(separator: ",")
        return "B\(node.itemMap):\(node.childMap)[\(children)]"
    }

    @Test("an empty trie has no keys and allocates no root")
    func emptyTrie() {
        var trie = HashTrie<String, Int>()
        #expect(trie.isEmpty && trie.count == 0 && trie["a"] == nil)
        #expect(trie.removeValue(forKey: "a") == nil)
        #expect(Array(trie).isEmpty && trie.root == nil)
        trie["a"] = 1
        trie["a"] = nil
        #expect(trie.root == nil && trie.isIdentical(to: HashTrie()))
        trie.checkInvariants()
    }

    @Test("the same keys give the same shape whatever the history of insertions and removals")
    func canonicalShape() {
        var random = SplitMix64(seed: 0x5A4E)
        let kept = (0..<3_000).filter { _ in random.chance(50) }.map { MixedKey(id: $0) }
        let extra =
            (3_000..<5_000).map { MixedKey(id: $0) }
            + (0..<3_000).filter { $0 % 16 == 0 }.map { MixedKey(id: -$0 - 16) }

        var inserted = HashTrie<MixedKey, Int>()
        for key in kept.shuffled(using: &random) { inserted[key] = key.id }

        var removed = HashTrie<MixedKey, Int>()
        for key in (kept + extra).shuffled(using: &random) { removed[key] = key.id }
        for key in extra.shuffled(using: &random) { removed[key] = nil }

        var churned = HashTrie<MixedKey, Int>()
        let everything = kept + extra
        for _ in 0..<20_000 {
            let key = everything[random.below(everything.count)]
            churned[key] = random.chance(50) ? key.id : nil
        }
        for key in kept { churned[key] = key.id }
        for key in extra { churned[key] = nil }

        for trie in [inserted, removed, churned] {
            trie.checkInvariants()
            #expect(trie.count == kept.count)
            #expect(Set(trie.map(\.key)) == Set(kept))
            #expect(Self.shape(trie) == Self.shape(inserted))
        }
    }

    @Test("keys of one full hash share a collision node, which shrinks back to a single inline pair")
    func identicalHashesShareOneNode() {
        var trie = HashTrie<SameHashKey, Int>()
        for id in 0..<50 { trie[SameHashKey(id: id)] = id }
        trie.checkInvariants()
        #expect(trie.root!.items.isEmpty && trie.root!.children.count == 1)
        #expect(trie.root!.children[0].isCollision && trie.root!.children[0].items.count == 50)
        for id in 1..<50 { #expect(trie.removeValue(forKey: SameHashKey(id: id)) == id) }
        trie.checkInvariants()
        #expect(trie.root!.children.isEmpty && trie.root!.items.count == 1 && trie[SameHashKey(id: 0)] == 0)
    }

    @Test("a collision node moves down below a key that shares its hash prefix and back up when the key leaves")
    func collisionNodeMovesDownAndUp() throws {
        let group = [MixedKey(id: 0), MixedKey(id: 48)]  // ids ≡ 0 mod 48 share one hash
        let groupHash = HashTrieNode<MixedKey, Int>.hash(group[0])
        // An ordinary key whose hash agrees with the group's on the first two levels (ten bits) and not on the third
        // puts the collision node two levels down, beside the key.
        let neighbour = try #require(
            (1..<1_000_000).lazy.filter { $0 % 16 != 0 }.map { MixedKey(id: $0) }.first {
                let difference = HashTrieNode<MixedKey, Int>.hash($0) ^ groupHash
                return difference & 0x3FF == 0 && difference & 0x7C00 != 0
            })

        var trie = HashTrie<MixedKey, Int>()
        for key in group { trie[key] = key.id }
        let groupOnly = Self.shape(trie)
        #expect(groupOnly.contains("C2"))

        trie[neighbour] = -1
        trie.checkInvariants()
        let root = try #require(trie.root)
        #expect(root.children.count == 1 && root.children[0].children.count == 1)
        let split = root.children[0].children[0]
        #expect(split.items.map(\.key) == [neighbour] && split.children.count == 1 && split.children[0].isCollision)

        trie[neighbour] = nil
        trie.checkInvariants()
        #expect(Self.shape(trie) == groupOnly)
    }

    @Test(
        "modify mutates a uniquely held element's array in place, and copies it only when shared",
        arguments: Sharing.allCases)
    func modifyKeepsElementStorage(sharing: Sharing) {
        var trie = HashTrie<Int, [Int]>()
        for key in 0..<300 { trie[key] = Array(repeating: key, count: 100) }
        let storage = trie.modify(137, default: { [] }) { $0.withUnsafeBufferPointer { $0.baseAddress } }
        let rootBefore = ObjectIdentifier(trie.root!)
        let hidden = sharing == .shared ? trie : nil

        let storageAfter = trie.modify(137, default: { [] }) { column -> UnsafePointer<Int>? in
            column[5] = -1
            return column.withUnsafeBufferPointer { $0.baseAddress }
        }
        #expect(trie[137]?[5] == -1)
        if let hidden {
            #expect(storageAfter != storage, "a shared element must be copied before writing")
            #expect(hidden[137]?[5] == 137, "the hidden copy must keep the old element")
            #expect(ObjectIdentifier(trie.root!) != rootBefore && !trie.isIdentical(to: hidden))
        } else {
            #expect(storageAfter == storage, "a unique element must be written in place")
            #expect(ObjectIdentifier(trie.root!) == rootBefore)
        }
    }

    @Test("removing an absent key copies nothing, even from a shared trie")
    func absentRemovalCopiesNothing() {
        var trie = HashTrie<FewHashesKey, Int>()
        for id in 0..<100 { trie[FewHashesKey(id: id)] = id }
        let hidden = trie
        #expect(trie.removeValue(forKey: FewHashesKey(id: 100)) == nil)
        #expect(trie.removeValue(forKey: FewHashesKey(id: -3)) == nil)
        #expect(trie.isIdentical(to: hidden))
    }

    @Test("an iterator keeps reading the version it started on while the trie changes")
    func iteratorSeesItsVersion() {
        var trie = HashTrie<Int, Int>()
        for key in 0..<500 { trie[key] = key }
        var iterator = trie.makeIterator()
        for key in 0..<500 where key % 2 == 0 { trie.removeValue(forKey: key) }
        trie[1] = -1
        var seen: [Int] = []
        while let element = iterator.next() { seen.append(element.value) }
        #expect(seen.sorted() == Array(0..<500))
        #expect(trie.count == 250 && trie[1] == -1)
    }

    @Test("modify inserts the default once, counts it, and keeps it if the body throws")
    func modifyInsertsDefault() {
        struct Failure: Error {}
        var trie = HashTrie<SameHashKey, Int>()
        trie[SameHashKey(id: 1)] = 1
        #expect(
            trie.modify(SameHashKey(id: 2), default: { 10 }) {
                $0 += 1; return $0
            } == 11)
        #expect(throws: Failure.self) {
            try trie.modify(SameHashKey(id: 3), default: { 5 }) { element in
                element = 6
                throw Failure()
            }
        }
        #expect(trie.count == 3 && trie[SameHashKey(id: 3)] == 6)
        trie.checkInvariants()
    }
}

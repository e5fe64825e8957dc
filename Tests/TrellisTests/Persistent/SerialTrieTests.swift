import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

@Suite("SerialTrie")
struct SerialTrieTests {
    @Test("an empty trie has no keys, bounds or elements and allocates no root")
    func emptyTrie() {
        var trie = SerialTrie<String>()
        #expect(trie.isEmpty && trie.count == 0)
        #expect(trie[0] == nil && trie[.max] == nil)
        #expect(trie.minKey == nil && trie.maxKey == nil)
        #expect(Array(trie).isEmpty && Array(trie.elements(from: 0)).isEmpty)
        #expect(trie.removeValue(forKey: 3) == nil)
        #expect(trie.root == nil && trie.isIdentical(to: SerialTrie()))
        trie.checkInvariants()
    }

    @Test("dense keys keep the trie shallow (height 2 below 2^18, 3 below 2^24) and come back in ascending order")
    func denseKeysStayShallow() {
        var trie = SerialTrie<UInt64>()
        for key in stride(from: UInt64(4_999), through: 0, by: -1) { trie[key] = key * 2 }
        #expect(trie.height == 2)
        trie[(1 << 24) - 1] = 1
        #expect(trie.height == 3)
        trie[(1 << 24) - 1] = nil
        #expect(trie.height == 2)
        trie.checkInvariants()
        #expect(trie.map(\.key) == Array(0..<5_000))
        #expect(trie.allSatisfy { $0.value == $0.key * 2 })
        #expect(trie.minKey == 0 && trie.maxKey == 4_999)
    }

    @Test("the largest keys raise the root to the top level, and removing them lowers it to the minimum again")
    func heightFollowsLargestKey() {
        var trie = SerialTrie<Int>()
        trie[5] = 5
        #expect(trie.height == 0)
        trie[.max] = -1
        trie[1 << 63] = -2
        #expect(trie.height == SerialTrieNode<Int>.maximumHeight)
        #expect(trie.map(\.key) == [5, 1 << 63, .max])
        #expect(trie.maxKey == .max)
        #expect(Array(trie.elements(from: 6)).map(\.key) == [1 << 63, .max])
        #expect(Array(trie.elements(from: .max)).map(\.value) == [-1])
        trie.checkInvariants()
        #expect(trie.removeValue(forKey: .max) == -1)
        #expect(trie.removeValue(forKey: 1 << 63) == -2)
        #expect(trie.height == 0 && trie.count == 1)
        trie.checkInvariants()
        #expect(trie.removeValue(forKey: 5) == 5)
        #expect(trie.root == nil && trie.height == 0)
    }

    @Test("elements(from:) starts at the bound whether or not the bound is a key, across levels")
    func elementsFromBound() {
        var trie = SerialTrie<Int>()
        let keys: [UInt64] = [0, 63, 64, 65, 4_095, 4_096, 70_000, 1 << 30]
        for key in keys { trie[key] = Int(key) }
        let bounds: [UInt64] = [0, 1, 63, 64, 66, 4_095, 4_097, 69_999, 70_001, 1 << 30, (1 << 30) + 1, .max]
        for bound in bounds {
            #expect(Array(trie.elements(from: bound)).map(\.key) == keys.filter { $0 >= bound }, "from \(bound)")
        }
    }

    @Test("a Void trie is a set whose leaves store no elements", arguments: Sharing.allCases)
    func voidTrieIsASet(sharing: Sharing) {
        var set = SerialTrie<Void>()
        for key in stride(from: UInt64(0), to: 10_000, by: 3) { set[key] = () }
        let hidden = sharing == .shared ? set : nil
        for key in stride(from: UInt64(0), to: 10_000, by: 6) { set.removeValue(forKey: key) }
        set.checkInvariants()
        #expect(set.count == 1_667)
        #expect(set[3] != nil && set[6] == nil && set.contains(9) && !set.contains(12))
        #expect(set.map(\.key) == Array(stride(from: 3, to: 10_000, by: 6)))
        if let hidden {
            #expect(hidden.count == 3_334 && hidden.contains(6))
            hidden.checkInvariants()
        }
        var leaves = [set.root!]
        for _ in 0..<set.height { leaves = leaves.flatMap(\.children) }
        #expect(leaves.allSatisfy { $0.items.isEmpty })
    }

    @Test(
        "modify mutates a uniquely held element's array in place, and copies it only when shared",
        arguments: Sharing.allCases)
    func modifyKeepsElementStorage(sharing: Sharing) {
        var trie = SerialTrie<[Int]>()
        for key in UInt64(0)..<200 { trie[key] = Array(repeating: Int(key), count: 100) }
        let key: UInt64 = 137
        let storage = trie.modify(key, default: { [] }) { $0.withUnsafeBufferPointer { $0.baseAddress } }
        let rootBefore = ObjectIdentifier(trie.root!)
        let hidden = sharing == .shared ? trie : nil

        let storageAfter = trie.modify(key, default: { [] }) { column -> UnsafePointer<Int>? in
            column[5] = -1
            return column.withUnsafeBufferPointer { $0.baseAddress }
        }
        #expect(trie[key]?[5] == -1)
        if let hidden {
            #expect(storageAfter != storage, "a shared element must be copied before writing")
            #expect(hidden[key]?[5] == 137, "the hidden copy must keep the old element")
            #expect(ObjectIdentifier(trie.root!) != rootBefore && !trie.isIdentical(to: hidden))
        } else {
            #expect(storageAfter == storage, "a unique element must be written in place")
            #expect(ObjectIdentifier(trie.root!) == rootBefore)
        }
    }

    @Test("modify inserts the default once, counts it, and keeps it if the body throws")
    func modifyInsertsDefault() throws {
        struct Failure: Error {}
        var trie = SerialTrie<Int>()
        var calls = 0
        let result = trie.modify(
            1 << 20,
            default: {
                calls += 1; return 10
            }
        ) { element -> Int in
            element += 1
            return element
        }
        #expect(result == 11 && calls == 1 && trie.count == 1)
        trie.modify(
            1 << 20,
            default: {
                calls += 1; return 0
            }
        ) { $0 += 1 }
        #expect(trie[1 << 20] == 12 && calls == 1)
        #expect(throws: Failure.self) {
            try trie.modify(9, default: { 5 }) { element in
                element = 6
                throw Failure()
            }
        }
        #expect(trie[9] == 6 && trie.count == 2)
        trie.checkInvariants()
    }

    @Test("removing an absent key copies nothing, even from a shared trie")
    func absentRemovalCopiesNothing() {
        var trie = SerialTrie<Int>()
        for key in UInt64(0)..<1_000 { trie[key] = 0 }
        let hidden = trie
        #expect(trie.removeValue(forKey: 5_000) == nil && trie.removeValue(forKey: 1 << 40) == nil)
        #expect(trie.isIdentical(to: hidden))
    }

    @Test("an iterator keeps reading the version it started on while the trie changes")
    func iteratorSeesItsVersion() {
        var trie = SerialTrie<Int>()
        for key in UInt64(0)..<500 { trie[key] = Int(key) }
        var iterator = trie.makeIterator()
        for key in UInt64(0)..<500 where key % 2 == 0 { trie.removeValue(forKey: key) }
        trie[1] = -1
        var seen: [Int] = []
        while let element = iterator.next() { seen.append(element.value) }
        #expect(seen == Array(0..<500))
        #expect(trie.count == 250 && trie[1] == -1)
    }

    @Test("an optional element stored as nil is still present")
    func optionalElements() {
        var trie = SerialTrie<Int?>()
        trie.updateValue(nil, forKey: 4)
        #expect(trie.contains(4) && trie.count == 1)
        #expect(trie.updateValue(3, forKey: 4) == .some(nil))
        #expect(trie.removeValue(forKey: 4) == .some(3))
        #expect(trie.isEmpty)
    }
}

import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Readers on other tasks hold a version (the collections are `Sendable`) while the writer goes on changing its own
/// copy: what each reader sees is exactly the version it was handed.
@Suite("Persistent collections read from other tasks")
struct SnapshotReaderTests {
    @Test("a SerialTrie snapshot read on another task is unaffected by later writes")
    func serialTrieSnapshot() async {
        var trie = SerialTrie<Int>()
        for key in UInt64(0)..<10_000 { trie[key] = Int(key) }
        let snapshot = trie
        let reader = Task.detached { snapshot.reduce(0) { $0 + $1.value } }
        for key in UInt64(0)..<10_000 { trie[key] = -1 }
        for key in UInt64(10_000)..<12_000 { trie[key] = 5 }
        #expect(await reader.value == (0..<10_000).reduce(0, +))
        #expect(trie.count == 12_000 && snapshot.count == 10_000 && snapshot[5] == 5)
    }

    @Test("a SortedTree snapshot scanned on another task is unaffected by later writes")
    func sortedTreeSnapshot() async {
        var tree = SortedTree<Int, Int>()
        for key in 0..<10_000 { tree[key] = key }
        let snapshot = tree
        let reader = Task.detached { Array(snapshot.elements(from: 100, to: 200, reverse: true)).map(\.key) }
        for key in 0..<10_000 where key % 3 == 0 { tree.removeValue(forKey: key) }
        #expect(await reader.value == Array((100..<200).reversed()))
        #expect(tree.count(from: 100, to: 200) == 67 && snapshot.count(from: 100, to: 200) == 100)
    }
}

import TrellisCore

extension SerialTrie {
    /// A trie holding `keys[i] → values[i]`, built bottom-up in one pass: each node is made once, with arrays of
    /// exactly the size it needs. `keys` must be strictly ascending; `values` must have as many elements as `keys`
    /// (for a zero-sized `Value`, any number: nothing is stored).
    ///
    /// Equal, node for node, to inserting the keys one by one, without the copies and the growth slack of inserts.
    ///
    /// - Complexity: O(n).
    package init(ascendingKeys keys: some RandomAccessCollection<UInt64>, values: some Collection<Value>) {
        self.init()
        guard let last = keys.last else { return }
        height = Self.height(for: last)
        storedCount = keys.count
        // Level 0: the leaves, each holding the keys that share all but their low six bits.
        var nodes: [(prefix: UInt64, node: Node)] = []
        var keyIterator = keys.makeIterator()
        var valueIterator = values.makeIterator()
        var pending = keyIterator.next()
        while let first = pending {
            let prefix = first >> UInt64(Node.bitsPerLevel)
            var bitmap: UInt64 = 0
            var size = 0
            var key: UInt64? = first
            while let k = key, k >> UInt64(Node.bitsPerLevel) == prefix {
                bitmap |= 1 &<< (k & 63)
                size += 1
                key = keyIterator.next()
            }
            pending = key
            var items = ContiguousArray<Value>()
            if Node.storesItems {
                items.reserveCapacity(size)
                for _ in 0..<size { items.append(valueIterator.next()!) }
            }
            nodes.append((prefix, Node(bitmap: bitmap, items: items)))
        }
        // Each level up groups the nodes whose prefixes share all but their low six bits.
        for _ in 0..<height {
            var parents: [(prefix: UInt64, node: Node)] = []
            parents.reserveCapacity(nodes.count / 8 + 1)
            var i = 0
            while i < nodes.count {
                let prefix = nodes[i].prefix >> UInt64(Node.bitsPerLevel)
                var j = i
                while j < nodes.count, nodes[j].prefix >> UInt64(Node.bitsPerLevel) == prefix { j += 1 }
                var bitmap: UInt64 = 0
                var children = ContiguousArray<Node>()
                children.reserveCapacity(j - i)
                for (childPrefix, child) in nodes[i..<j] {
                    bitmap |= 1 &<< (childPrefix & 63)
                    children.append(child)
                }
                parents.append((prefix, Node(bitmap: bitmap, children: children)))
                i = j
            }
            nodes = parents
        }
        root = nodes[0].node
    }
}

/// Keys whose hashes are made to collide, to drive a `HashTrie` into its collision nodes and the splits around them.

/// A key with only seven distinct hash values: every key shares its full hash with many others.
struct FewHashesKey: Hashable, Sendable, CustomStringConvertible {
    let id: Int

    func hash(into hasher: inout Hasher) {
        hasher.combine(id % 7)
    }

    var description: String { "few(\(id))" }
}

/// A key whose hash is the same for every value: the whole trie hangs off one collision node.
struct SameHashKey: Hashable, Sendable, CustomStringConvertible {
    let id: Int

    func hash(into hasher: inout Hasher) {
        hasher.combine(0)
    }

    var description: String { "same(\(id))" }
}

/// A key that hashes normally except for one id in sixteen, which falls into one of three shared hashes: collision
/// nodes then sit among ordinary pairs and subtrees, so they get split, pushed down and hoisted back up.
struct MixedKey: Hashable, Sendable, CustomStringConvertible {
    let id: Int

    func hash(into hasher: inout Hasher) {
        if id % 16 == 0 {
            hasher.combine(-1 - id % 3)
        } else {
            hasher.combine(id)
        }
    }

    var description: String { "mixed(\(id))" }
}

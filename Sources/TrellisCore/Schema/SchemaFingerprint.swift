import Foundation

/// A 64-bit FNV-1a digest of a canonical text of the schema's structure; stable across runs, processes and
/// platforms. Defaults are left out on purpose: a model's `Date()` or `UUID()` default differs in every process.
enum SchemaFingerprint {
    static func digest(of entities: [EntityDescription]) -> UInt64 {
        var text = ""
        for e in entities {
            text += e.isRetired ? "E:\(e.name):retired;" : "E:\(e.name);"
            for a in e.attributes {
                text += "A:\(a.name):\(a.type.rawValue):\(a.isOptional ? 1 : 0);"
            }
            for r in e.relationships {
                text += "R:\(r.name):\(r.target):\(r.inverse):\(r.isToMany ? 1 : 0):\(r.deleteRule.rawValue)"
                // Only ordered relationships add to the text, so every fingerprint stored before they existed holds.
                text += ":\(r.minCount):\(r.maxCount.map(String.init) ?? "-")\(r.isOrdered ? ":o" : "");"
            }
            for i in e.indexes { text += "I:\(i.attributes.joined(separator: ",")):\(i.isUnique ? 1 : 0);" }
        }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}

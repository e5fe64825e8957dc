// TEMPORARY stand-ins with the agreed API, replaced by the real persistent structures when they land.

struct SerialTrie<Element> {
    private var storage: [UInt64: Element] = [:]
    init() {}
    var count: Int { storage.count }
    var isEmpty: Bool { storage.isEmpty }
    subscript(key: UInt64) -> Element? {
        get { storage[key] }
        set { storage[key] = newValue }
    }
    @discardableResult mutating func updateValue(_ value: Element, forKey key: UInt64) -> Element? {
        storage.updateValue(value, forKey: key)
    }
    @discardableResult mutating func removeValue(forKey key: UInt64) -> Element? { storage.removeValue(forKey: key) }
    mutating func modify<R>(
        _ key: UInt64, default defaultValue: () -> Element, _ body: (inout Element) throws -> R
    )
        rethrows -> R
    {
        try body(&storage[key, default: defaultValue()])
    }
    func forEach(_ body: (UInt64, Element) throws -> Void) rethrows {
        for k in storage.keys.sorted() { try body(k, storage[k]!) }
    }
    var minKey: UInt64? { storage.keys.min() }
    var maxKey: UInt64? { storage.keys.max() }
    func elements(from lowerKey: UInt64) -> [(key: UInt64, value: Element)] {
        storage.keys.sorted().filter { $0 >= lowerKey }.map { ($0, storage[$0]!) }
    }
    func isIdentical(to other: SerialTrie<Element>) -> Bool { false }
    func checkInvariants() {}
}
extension SerialTrie: Sequence {
    func makeIterator() -> IndexingIterator<[(key: UInt64, value: Element)]> {
        elements(from: 0).makeIterator()
    }
}
extension SerialTrie: Sendable where Element: Sendable {}

struct SortedTree<Key: Comparable, Value> {
    private var keys: [Key] = []
    private var values: [Value] = []
    init() {}
    var count: Int { keys.count }
    var isEmpty: Bool { keys.isEmpty }
    private func position(_ key: Key) -> Int {
        var lo = 0
        var hi = keys.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if keys[mid] < key { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
    subscript(key: Key) -> Value? {
        get {
            let p = position(key)
            return p < keys.count && !(key < keys[p]) ? values[p] : nil
        }
        set {
            if let v = newValue { updateValue(v, forKey: key) } else { removeValue(forKey: key) }
        }
    }
    @discardableResult mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        let p = position(key)
        if p < keys.count && !(key < keys[p]) {
            let old = values[p]
            values[p] = value
            return old
        }
        keys.insert(key, at: p)
        values.insert(value, at: p)
        return nil
    }
    @discardableResult mutating func removeValue(forKey key: Key) -> Value? {
        let p = position(key)
        guard p < keys.count && !(key < keys[p]) else { return nil }
        keys.remove(at: p)
        return values.remove(at: p)
    }
    var first: (key: Key, value: Value)? { keys.isEmpty ? nil : (keys[0], values[0]) }
    var last: (key: Key, value: Value)? { keys.isEmpty ? nil : (keys[keys.count - 1], values[keys.count - 1]) }
    private func bounds(_ lower: Key?, _ li: Bool, _ upper: Key?, _ ui: Bool) -> Range<Int> {
        var lo = 0
        var hi = keys.count
        if let l = lower {
            lo = position(l)
            if !li { while lo < keys.count && !(l < keys[lo]) { lo += 1 } }
        }
        if let u = upper {
            hi = position(u)
            if ui { while hi < keys.count && !(u < keys[hi]) { hi += 1 } }
        }
        return lo..<max(lo, hi)
    }
    func elements(
        from lower: Key? = nil, inclusive lowerInclusive: Bool = true, to upper: Key? = nil,
        inclusive upperInclusive: Bool = false, reverse: Bool = false
    ) -> [(key: Key, value: Value)] {
        let r = bounds(lower, lowerInclusive, upper, upperInclusive)
        let out = r.map { (key: keys[$0], value: values[$0]) }
        return reverse ? out.reversed() : out
    }
    func count(
        from lower: Key? = nil, inclusive li: Bool = true, to upper: Key? = nil, inclusive ui: Bool = false
    )
        -> Int
    {
        bounds(lower, li, upper, ui).count
    }
    func rank(of key: Key) -> Int { position(key) }
    func forEach(_ body: (Key, Value) throws -> Void) rethrows {
        for i in keys.indices { try body(keys[i], values[i]) }
    }
    func isIdentical(to other: SortedTree<Key, Value>) -> Bool { false }
    func checkInvariants() {}
}
extension SortedTree: Sendable where Key: Sendable, Value: Sendable {}

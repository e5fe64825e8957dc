import TrellisCore

/// The targets of one ordered to-many relationship of one object: a persistent sequence of distinct serials, edited by
/// position (insert, move, remove) and asked for the position of a serial, each in O(log k) for k targets.
///
/// Each serial holds a 64-bit position key; the keys ascend in list order, so a rank tree of keys gives the serial at
/// an index and a trie of serials gives the key, whose rank is the index. An insert takes a key between its
/// neighbours'; when they leave no room, every key is spaced out again (O(k), after at least 31 inserts in one gap).
/// Versions share structure as the trees they are made of do.
@usableFromInline package struct OrderedTargets: Sendable, Equatable {
    /// The space between consecutive keys after a respacing: room for 31 halvings of a gap either side.
    static let spacing: UInt64 = 1 << 32
    /// Position key → serial, in list order.
    private var order = SortedTree<UInt64, UInt64>()
    /// Serial → its position key.
    private var keys = SerialTrie<UInt64>()

    /// An empty list.
    @usableFromInline package init() {}

    /// The list of `serials` in this order, spaced evenly. Precondition: no serial twice.
    /// - Complexity: O(k).
    package init<S: Sequence<UInt64>>(_ serials: S) {
        for serial in serials { insert(serial, at: count) }
    }

    /// The number of targets.
    @usableFromInline package var count: Int { order.count }

    /// The targets in list order.
    /// - Complexity: O(k).
    @usableFromInline package var serials: [UInt64] {
        var out: [UInt64] = []
        out.reserveCapacity(count)
        order.forEach { _, serial in out.append(serial) }
        return out
    }

    /// Whether `serial` is in the list.
    @usableFromInline package func contains(_ serial: UInt64) -> Bool { keys.contains(serial) }

    /// The serial at `index`. Precondition: `0 <= index < count`.
    package func serial(at index: Int) -> UInt64 { order.element(atRank: index).value }

    /// The position of `serial`, or nil when it is not in the list.
    package func index(of serial: UInt64) -> Int? {
        keys.value(forKey: serial).map { order.rank(of: $0) }
    }

    /// Inserts `serial` before the target at `index` (at the end when `index == count`). Precondition: `serial` is not
    /// in the list and `0 <= index <= count`.
    package mutating func insert(_ serial: UInt64, at index: Int) {
        precondition(index >= 0 && index <= count, "OrderedTargets: index \(index) out of 0...\(count)")
        precondition(!keys.contains(serial), "OrderedTargets: \(serial) is already in the list")
        let key =
            freeKey(before: index)
            ?? {
                respace(); return freeKey(before: index)!
            }()
        order[key] = serial
        keys[serial] = key
    }

    /// Removes and returns the target at `index`. Precondition: `0 <= index < count`.
    @discardableResult
    package mutating func remove(at index: Int) -> UInt64 {
        let (key, serial) = order.element(atRank: index)
        order[key] = nil
        keys[serial] = nil
        return serial
    }

    /// Removes `serial`, returning the position it had, or nil when it was not in the list.
    @discardableResult
    package mutating func remove(_ serial: UInt64) -> Int? {
        guard let key = keys.removeValue(forKey: serial) else { return nil }
        let index = order.rank(of: key)
        order[key] = nil
        return index
    }

    /// Moves the target at `source` so that it ends up at `destination` (an index in the list after the move, as
    /// `Array.remove(at:)` then `insert(_:at:)` would leave it). Preconditions: both in `0 ..< count`.
    package mutating func move(from source: Int, to destination: Int) {
        precondition(destination >= 0 && destination < count, "OrderedTargets: index \(destination) out of range")
        let serial = remove(at: source)
        insert(serial, at: destination)
    }

    /// Two lists are equal when they hold the same serials in the same order (whatever their keys).
    @usableFromInline package static func == (lhs: OrderedTargets, rhs: OrderedTargets) -> Bool {
        lhs.count == rhs.count && lhs.serials == rhs.serials
    }

    /// A key strictly between the keys of the targets at `index - 1` and `index`, or nil when there is none.
    private func freeKey(before index: Int) -> UInt64? {
        let lower = index > 0 ? order.element(atRank: index - 1).key : 0
        guard index < count else {
            // At the end: one spacing on, while that fits.
            return lower <= UInt64.max - Self.spacing ? lower + Self.spacing : nil
        }
        let upper = order.element(atRank: index).key
        return upper - lower >= 2 ? lower + (upper - lower) / 2 : nil
    }

    /// Gives the targets the keys 1, 2, 3, … times `spacing`, in list order.
    private mutating func respace() {
        let serials = self.serials
        precondition(UInt64(serials.count) < UInt64.max / Self.spacing, "OrderedTargets: too many targets")
        let spaced = ContiguousArray((0..<UInt64(serials.count)).map { ($0 + 1) * Self.spacing })
        order = SortedTree(ascendingKeys: spaced, values: ContiguousArray(serials))
        var keys = SerialTrie<UInt64>()
        for (serial, key) in zip(serials, spaced) { keys[serial] = key }
        self.keys = keys
    }

    /// Checks that the two trees describe the same list (for tests).
    package func checkInvariants() {
        precondition(order.count == keys.count, "OrderedTargets: \(order.count) keys but \(keys.count) serials")
        order.forEach { key, serial in
            precondition(keys.value(forKey: serial) == key, "OrderedTargets: serial \(serial) lost its key")
        }
    }
}

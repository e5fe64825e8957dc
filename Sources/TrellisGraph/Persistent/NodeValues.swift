import TrellisCore

/// The values of a `SortedTree` node or pending run, in key order: a `ContiguousArray`, except that a zero-sized
/// `Value` (the `Void` of every index tree) keeps only a count. An index's tree then allocates, copies and shifts
/// nothing for its values when a node is copied, split or written; only its keys take memory.
///
/// It offers the part of `ContiguousArray`'s interface the tree uses, so the tree's code reads the same for both.
struct NodeValues<Value> {
    private var storage: ContiguousArray<Value>
    /// The count when `Value` is zero-sized (and `storage` stays empty); 0 otherwise.
    private var zeroSizedCount: Int

    /// Whether `Value` takes no storage; a constant once the code is specialized.
    @inline(__always) static var isZeroSized: Bool { MemoryLayout<Value>.size == 0 }

    /// The one value of a zero-sized type.
    @inline(__always) static var zeroSizedValue: Value { unsafeBitCast((), to: Value.self) }

    init() {
        storage = []
        zeroSizedCount = 0
    }

    /// The elements of `elements`, in order.
    init<C: Collection>(_ elements: C) where C.Element == Value {
        if Self.isZeroSized {
            storage = []
            zeroSizedCount = elements.count
        } else {
            storage = ContiguousArray(elements)
            zeroSizedCount = 0
        }
    }

    /// - Complexity: O(1).
    var count: Int { Self.isZeroSized ? zeroSizedCount : storage.count }

    /// - Complexity: O(1).
    var isEmpty: Bool { count == 0 }

    /// The value at `position`.
    /// - Complexity: O(1).
    subscript(position: Int) -> Value {
        @inline(__always) get {
            guard Self.isZeroSized else { return storage[position] }
            precondition(position >= 0 && position < zeroSizedCount, "NodeValues: position out of range")
            return Self.zeroSizedValue
        }
        @inline(__always) set {
            guard Self.isZeroSized else {
                storage[position] = newValue
                return
            }
            precondition(position >= 0 && position < zeroSizedCount, "NodeValues: position out of range")
        }
    }

    /// A copy of the values at `range`.
    /// - Complexity: O(range.count), O(1) when `Value` is zero-sized.
    func slice(_ range: Range<Int>) -> NodeValues {
        guard Self.isZeroSized else { return NodeValues(storage[range]) }
        precondition(range.lowerBound >= 0 && range.upperBound <= zeroSizedCount, "NodeValues: range out of bounds")
        var slice = NodeValues()
        slice.zeroSizedCount = range.count
        return slice
    }

    /// - Complexity: O(n).
    mutating func insert(_ value: Value, at position: Int) {
        guard Self.isZeroSized else { return storage.insert(value, at: position) }
        precondition(position >= 0 && position <= zeroSizedCount, "NodeValues: position out of range")
        zeroSizedCount += 1
    }

    /// `ContiguousArray.insertGrowingSlowly`.
    /// - Complexity: O(n).
    mutating func insertGrowingSlowly(_ value: Value, at position: Int) {
        guard Self.isZeroSized else { return storage.insertGrowingSlowly(value, at: position) }
        insert(value, at: position)
    }

    /// - Complexity: O(n).
    @discardableResult
    mutating func remove(at position: Int) -> Value {
        guard Self.isZeroSized else { return storage.remove(at: position) }
        precondition(position >= 0 && position < zeroSizedCount, "NodeValues: position out of range")
        zeroSizedCount -= 1
        return Self.zeroSizedValue
    }

    /// - Complexity: O(1) amortized.
    mutating func append(_ value: Value) {
        guard Self.isZeroSized else { return storage.append(value) }
        zeroSizedCount += 1
    }

    /// - Complexity: O(other.count).
    static func += (values: inout NodeValues, other: NodeValues) {
        guard isZeroSized else { return values.storage += other.storage }
        values.zeroSizedCount += other.zeroSizedCount
    }

    /// - Complexity: O(n) when it reallocates.
    mutating func reserveCapacity(_ capacity: Int) {
        guard !Self.isZeroSized else { return }
        storage.reserveCapacity(capacity)
    }

    /// Calls `body` with the values in place (for a zero-sized `Value`, a buffer of `count` that no read touches).
    func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Value>) throws -> R) rethrows -> R {
        guard Self.isZeroSized else { return try storage.withUnsafeBufferPointer(body) }
        let start = UnsafePointer<Value>(bitPattern: MemoryLayout<Value>.alignment)
        return try body(UnsafeBufferPointer(start: start, count: zeroSizedCount))
    }
}

extension NodeValues: ExpressibleByArrayLiteral {
    init(arrayLiteral elements: Value...) { self.init(elements) }
}

extension NodeValues: Sendable where Value: Sendable {}

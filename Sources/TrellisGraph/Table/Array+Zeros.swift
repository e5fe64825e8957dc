extension Array where Element: ExpressibleByIntegerLiteral {
    /// `count` zeros. `Array(repeating:count:)` allocates through the standard library's unspecialized
    /// `_allocateBufferUninitialized`, which looks the buffer's class up in the runtime's metadata cache on every
    /// call (a checkpoint load makes a dozen arrays for every leaf);
    /// `reserveCapacity` allocates through code specialized here, whose class is looked up once.
    @inlinable @inline(__always)
    package static func zeros(_ count: Int) -> [Element] {
        var zeros: [Element] = []
        zeros.reserveCapacity(count)
        zeros.append(contentsOf: repeatElement(0, count: count))
        return zeros
    }
}

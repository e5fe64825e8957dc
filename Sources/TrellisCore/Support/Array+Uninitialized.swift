// At a capacity of 0, the standard library's `init(unsafeUninitializedCapacity:initializingWith:)` stores the count
// (a zero over the zero) into `_swiftEmptyArrayStorage`, the one object every empty array in the process shares: a
// plain write racing every thread that reads an empty array (ThreadSanitizer caught a read-only open's checkpoint
// decode against a writer's commit encoding). The library builds its buffers through these initializers instead.

extension Array {
    /// `init(unsafeUninitializedCapacity:initializingWith:)`, except that a capacity of 0 writes nothing into the
    /// empty-array storage the whole process shares; the body still runs, on an empty buffer, and must leave the
    /// count at 0.
    @inlinable
    package init<E: Error>(
        uninitializedCapacity capacity: Int,
        initializingWith body: (inout UnsafeMutableBufferPointer<Element>, inout Int) throws(E) -> Void
    ) throws(E) {
        guard capacity > 0 else {
            try emptyUninitialized(body)
            self = []
            return
        }
        self = try Array(unsafeUninitializedCapacity: capacity, initializingWith: body)
    }
}

extension ContiguousArray {
    /// `init(unsafeUninitializedCapacity:initializingWith:)`, except that a capacity of 0 writes nothing into the
    /// empty-array storage the whole process shares; the body still runs, on an empty buffer, and must leave the
    /// count at 0.
    @inlinable
    package init<E: Error>(
        uninitializedCapacity capacity: Int,
        initializingWith body: (inout UnsafeMutableBufferPointer<Element>, inout Int) throws(E) -> Void
    ) throws(E) {
        guard capacity > 0 else {
            try emptyUninitialized(body)
            self = []
            return
        }
        self = try ContiguousArray(unsafeUninitializedCapacity: capacity, initializingWith: body)
    }
}

/// Runs an initializing body on an empty buffer and checks that it initialized nothing.
@inlinable
func emptyUninitialized<Element, E: Error>(
    _ body: (inout UnsafeMutableBufferPointer<Element>, inout Int) throws(E) -> Void
) throws(E) {
    var buffer = UnsafeMutableBufferPointer<Element>(start: nil, count: 0)
    var initialized = 0
    try body(&buffer, &initialized)
    precondition(initialized == 0, "initialized \(initialized) elements of an empty buffer")
}

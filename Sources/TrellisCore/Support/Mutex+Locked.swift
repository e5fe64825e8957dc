import CThreadSanitizer
import Synchronization

extension Mutex {
    /// `withLock`, with the lock's ordering told to ThreadSanitizer: on Linux the mutex waits in futex calls the
    /// sanitizer does not see, so without this every value it guards looks raced. Outside a sanitized build the
    /// annotations are two null checks.
    @inlinable
    package borrowing func locked<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        // The mutex's address stands for the lock: it is fixed for the mutex's lifetime.
        let address = withUnsafePointer(to: self) { UnsafeMutableRawPointer(mutating: $0) }
        return try withLock { (value: inout sending Value) throws(E) -> sending Result in
            trellis_tsan_acquire(address)
            defer { trellis_tsan_release(address) }
            return try body(&value)
        }
    }
}

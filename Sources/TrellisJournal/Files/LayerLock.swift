/// A held exclusive lock; released by `release()` or when the lock is deallocated.
package protocol LayerLock: AnyObject, Sendable {
    func release()
}

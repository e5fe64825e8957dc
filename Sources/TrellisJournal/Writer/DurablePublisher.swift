/// Whoever makes durable commits visible: the store.
package protocol DurablePublisher: AnyObject, Sendable {
    func publishDurable(_ commits: [Commit])
    /// Called after each turn of the writer (on the flusher, or on a committing thread) with the newest commit synced
    /// (in every durability mode), so that what waits for durability (the history feed) can go on.
    func synced(through sequence: UInt64)
}

/// A weak reference to the publisher, so the journal does not keep its store alive.
struct WeakPublisher {
    weak var target: (any DurablePublisher)?
}

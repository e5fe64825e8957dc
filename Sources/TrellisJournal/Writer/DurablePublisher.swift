/// Whoever makes durable commits visible: the store.
package protocol DurablePublisher: AnyObject, Sendable {
    func publishDurable(_ commits: [Commit])
    /// Called after each turn of the writer (on the flusher, or on a committing thread) with the newest commit synced
    /// (in every durability mode), so that what waits for durability (the history feed) can go on.
    func synced(through sequence: UInt64)
    /// Called once the journal's last turn is over, at its close (on the thread that finished closing it).
    func closed()
}

/// The publisher the journal (or a follower) delivers to, once started. Held strongly: the publisher is not the store
/// but what the store publishes through, which holds neither the journal nor the store, so no cycle keeps either alive.
/// (A weak reference to the store gave it a side table, and every retain and release of it the runtime's slow path.)
struct PublisherLink {
    var target: (any DurablePublisher)?
}

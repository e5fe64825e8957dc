/// Whoever makes durable commits visible: the store.
package protocol DurablePublisher: AnyObject, Sendable {
    func publishDurable(_ commits: [Commit])
}

/// A weak reference to the publisher, so the journal does not keep its store alive.
struct WeakPublisher {
    weak var target: (any DurablePublisher)?
}

import Dispatch
import Synchronization
import TrellisCore

/// A subscription's queue of delivered messages, read with `next(timeout:)`.
///
/// The queue is bounded (`NATSOptions.subscriptionLimit` messages): when the reader falls that far behind, newer
/// messages are dropped and counted in `droppedCount` rather than held without limit. The subscription survives
/// reconnects (the client subscribes again on the new connection).
///
/// ```swift
/// let subscription = try connection.subscribe("trellis.>")
/// if let message = try subscription.next(timeout: .seconds(1)) { print(message.subject) }
/// ```
public final class NATSSubscription: Sendable {
    /// The subject (possibly with wildcards) subscribed to.
    public let subject: String
    /// The queue group, if any.
    public let queueGroup: String?
    let sid: UInt64
    private let limit: Int
    private let queue = Mutex(Queue())
    private let available = DispatchSemaphore(value: 0)

    struct Queue {
        var messages: [NATSMessage] = []
        var head = 0
        var closed: NATSError?
        var dropped = 0
    }

    init(subject: String, queueGroup: String?, sid: UInt64, limit: Int) {
        self.subject = subject
        self.queueGroup = queueGroup
        self.sid = sid
        self.limit = limit
    }

    /// The messages dropped because the queue was full.
    public var droppedCount: Int { queue.locked { $0.dropped } }

    /// The next message, waiting at most `timeout`; nil when none came in time. Throws `subscriptionClosed` (or the
    /// connection's closing error) once the subscription has ended and its queue is empty.
    public func next(timeout: Duration) throws -> NATSMessage? {
        let deadline = DispatchTime.now() + .nanoseconds(Int(clamping: timeout.nanoseconds))
        while true {
            let taken: Result<NATSMessage, NATSError>? = queue.locked { queue in
                if queue.head < queue.messages.count {
                    let message = queue.messages[queue.head]
                    queue.head += 1
                    if queue.head == queue.messages.count {
                        queue.messages.removeAll(keepingCapacity: true)
                        queue.head = 0
                    }
                    return .success(message)
                }
                if let closed = queue.closed { return .failure(closed) }
                return nil
            }
            switch taken {
            case .success(let message): return message
            case .failure(let error):
                available.signal()  // Whoever else waits sees the end too.
                throw error
            case nil:
                if available.wait(timeout: deadline) == .timedOut { return nil }
            }
        }
    }

    func deliver(_ message: NATSMessage) {
        let accepted = queue.locked { queue in
            guard queue.closed == nil else { return false }
            if queue.messages.count - queue.head >= limit {
                queue.dropped += 1
                return false
            }
            queue.messages.append(message)
            return true
        }
        if accepted { available.signal() }
    }

    func end(_ error: NATSError) {
        queue.locked { queue in
            if queue.closed == nil { queue.closed = error }
        }
        available.signal()
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? Int64.max : product &+ attoseconds / 1_000_000_000
    }
}

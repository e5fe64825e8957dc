import Dispatch
import Synchronization
import TrellisCore
import TrellisGraph

/// A one-shot outcome that one thread waits for and another completes: a commit waiting for its sync, a `flush()`,
/// a `compact()`, a `close()`.
package final class Ticket: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let outcome = Mutex<TrellisError?>(nil)

    /// Completes the ticket (nil: success). Call exactly once.
    func complete(_ error: TrellisError? = nil) {
        outcome.locked { $0 = error }
        done.signal()
    }

    /// Blocks until the ticket is completed; rethrows its error. Any number of waits may be made, before or after
    /// completion.
    package func wait() throws {
        done.wait()
        // Pass the signal on, so the next waiter (or a later wait) does not block: a latch, not a handoff.
        done.signal()
        if let error = outcome.locked({ $0 }) { throw error }
    }
}

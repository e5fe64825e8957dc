import Dispatch
import Foundation
import Synchronization

/// A result being computed on another thread: a large commit encodes its changes for the journal, and maintains its
/// indexes, on the second core while its own thread writes the leaves.
///
/// Whoever gets to the work first does it: the background thread, or the waiting thread when the background thread is
/// still busy with earlier work (on two cores, one piece after another). A big commit queues its index changes first
/// and its encoding second (made with `queued` false, queued once the index changes are), since it needs the index
/// changes first; while the background thread sorts them, the commit's thread writes the leaves and then does the
/// encoding itself (`wait(helping:)`) rather than wait idle.
package final class BackgroundWork<Result: Sendable>: Sendable {
    private let work: Mutex<(@Sendable () -> Result)?>
    private let result = Mutex<Result?>(nil)
    private let done = DispatchSemaphore(value: 0)
    private let target: DispatchQueue
    /// Whether the work was queued; set once, by `init` or `queue()`.
    private let wasQueued = Atomic<Bool>(false)

    /// Queues `work` on `queue` (by default `BackgroundQueue`'s): at once, or with `queued` false only when
    /// `queue()` is called (so that work needed sooner can go ahead of it on a serial queue).
    package init(
        on queue: DispatchQueue = BackgroundQueue.queue, queued: Bool = true,
        _ work: @escaping @Sendable () -> Result
    ) {
        self.work = Mutex(work)
        target = queue
        if queued { self.queue() }
    }

    /// Queues work made with `queued` false, once (queueing it twice is a programming error: work queued at once
    /// would already sit ahead of what it was meant to follow). `wait()` does the work itself when it was never
    /// queued.
    package func queue() {
        let (exchanged, _) = wasQueued.compareExchange(expected: false, desired: true, ordering: .relaxed)
        precondition(exchanged, "BackgroundWork queued twice")
        target.async { [self] in runIfNotStarted() }
    }

    /// Runs the work here unless a thread has taken it already; false when one had.
    @discardableResult
    package func runIfNotStarted() -> Bool {
        guard let work = work.locked({ $0.take() }) else { return false }
        let value = work()
        result.locked { $0 = value }
        done.signal()
        return true
    }

    /// The result: computed here if no thread has started on it yet, else once the thread that did returns it. Call
    /// at most once.
    package func wait() -> Result { wait(helping: BackgroundWork?.none) }

    /// `wait()`, doing `other` here first (unless a thread has started on it) when another thread took this work
    /// (running it, or done with it already): on two cores the waiting thread then takes the piece queued behind this
    /// one instead of idling.
    package func wait<Other>(helping other: BackgroundWork<Other>?) -> Result {
        if !runIfNotStarted() { other?.runIfNotStarted() }
        done.wait()
        return result.locked { $0.take() }!
    }
}

extension BackgroundWork where Result == [[UInt8]] {
    /// Commits with at least this many inserts (or updates, or deletes) encode them for the journal on another
    /// thread (as pieces that follow one another); below it, handing the work over costs more than it saves.
    package static var minimumChanges: Int { 512 }
}

import Dispatch
import Foundation
import Synchronization

/// A result being computed on another thread: a large commit encodes its changes for the journal, and maintains its
/// indexes, on the second core while its own thread writes the leaves.
///
/// Whoever gets to the work first does it: the background thread, or the waiting thread when the background thread is
/// still busy with earlier work (on two cores, one piece after another). A big insert queues its encoding first and
/// its index changes second, but needs the index changes first: waiting for them behind the encoding would leave the
/// commit's thread idle.
package final class BackgroundWork<Result: Sendable>: Sendable {
    private let work: Mutex<(@Sendable () -> Result)?>
    private let result = Mutex<Result?>(nil)
    private let done = DispatchSemaphore(value: 0)

    /// Queues `work` at once on `queue` (by default `BackgroundQueue`'s).
    package init(on queue: DispatchQueue = BackgroundQueue.queue, _ work: @escaping @Sendable () -> Result) {
        self.work = Mutex(work)
        queue.async { [self] in runIfNotStarted() }
    }

    /// Runs the work here unless a thread has taken it already.
    private func runIfNotStarted() {
        guard let work = work.locked({ $0.take() }) else { return }
        let value = work()
        result.locked { $0 = value }
        done.signal()
    }

    /// The result: computed here if no thread has started on it yet, else once the thread that did returns it. Call
    /// at most once.
    package func wait() -> Result {
        runIfNotStarted()
        done.wait()
        return result.locked { $0.take() }!
    }
}

extension BackgroundWork where Result == [[UInt8]] {
    /// Commits with at least this many inserts (or updates, or deletes) encode them for the journal on another
    /// thread (as pieces that follow one another); below it, handing the work over costs more than it saves.
    package static var minimumChanges: Int { 512 }
}

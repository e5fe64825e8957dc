import Foundation
import Synchronization
import TrellisCore

/// The threads running a store's observers at this moment. A call that waits for the store (a commit, a flush,
/// compaction, close, a follower's catch-up) from inside one of its handlers would wait for what that thread itself
/// holds (the writer lock, or the journal's turn in `.perCommit` durability); the store checks here and throws instead.
final class ObserverThreads: Sendable {
    /// How many threads are inside handlers: zero almost always, so a commit checks one atomic and nothing else.
    private let running = Atomic<Int>(0)
    private let threads = Mutex<[pthread_t]>([])

    /// Runs `body` (which calls the handlers) with the current thread counted as running observers.
    func run(_ body: () -> Void) {
        let me = pthread_self()
        threads.locked { $0.append(me) }
        running.add(1, ordering: .sequentiallyConsistent)
        defer {
            running.subtract(1, ordering: .sequentiallyConsistent)
            threads.locked { all in
                if let i = all.firstIndex(where: { pthread_equal($0, me) != 0 }) { all.remove(at: i) }
            }
        }
        body()
    }

    /// Whether the current thread is inside one of the store's handlers. Only that thread adds or removes itself, so
    /// its own answer is exact; other threads' entries only make the check look at the list.
    var includesCurrentThread: Bool {
        guard running.load(ordering: .sequentiallyConsistent) > 0 else { return false }
        let me = pthread_self()
        return threads.locked { all in all.contains { pthread_equal($0, me) != 0 } }
    }

    /// Throws `.calledFromObserver` when the current thread is inside one of the store's handlers; `call` names what
    /// was called, for the message.
    func refuse(_ call: String) throws {
        guard includesCurrentThread else { return }
        throw TrellisError(
            .calledFromObserver,
            "\(call) was called from inside an observer of this store: it would wait for the thread running the observer; "
                + "do it from another queue or task (the observer can hop there). Nothing changed")
    }
}

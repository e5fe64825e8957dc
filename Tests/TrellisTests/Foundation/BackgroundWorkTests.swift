import Dispatch
import Foundation
import Synchronization
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Work handed to another thread is done once, by whoever gets to it first: the queue's thread, or the thread that
/// waits for the result while the queue is still busy with earlier work.
@Suite struct BackgroundWorkTests {
    /// Which threads ran a piece of work, and how often.
    final class Runs: Sendable {
        let threads = Mutex<[String]>([])
        func record(_ name: String) { threads.locked { $0.append(name) } }
        var all: [String] { threads.locked { $0 } }
    }

    @Test(.timeLimit(.minutes(1)))
    func aWaiterDoesWorkTheBusyQueueHasNotStartedAndTheQueueSkipsItLater() {
        let queue = DispatchQueue(label: "background-work-test")
        let release = DispatchSemaphore(value: 0)
        let blocked = DispatchSemaphore(value: 0)
        queue.async {
            blocked.signal()
            release.wait()
        }
        blocked.wait()
        let runs = Runs()
        let waiter = pthread_self()
        let work = BackgroundWork(on: queue) { () -> Int in
            runs.record(pthread_equal(pthread_self(), waiter) != 0 ? "waiter" : "queue")
            return 42
        }
        // The queue is held by the first item: the result can only come from this thread.
        #expect(work.wait() == 42)
        #expect(runs.all == ["waiter"])
        release.signal()
        queue.sync {}
        #expect(runs.all == ["waiter"])
    }

    @Test func aWaiterWaitsForWorkTheQueueHasStarted() {
        let queue = DispatchQueue(label: "background-work-test")
        let started = DispatchSemaphore(value: 0)
        let finish = DispatchSemaphore(value: 0)
        let runs = Runs()
        let waiter = pthread_self()
        let work = BackgroundWork(on: queue) { () -> [Int] in
            started.signal()
            finish.wait()
            runs.record(pthread_equal(pthread_self(), waiter) != 0 ? "waiter" : "queue")
            return [1, 2, 3]
        }
        started.wait()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { finish.signal() }
        #expect(work.wait() == [1, 2, 3])
        #expect(runs.all == ["queue"])
    }
}

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
    /// Which pieces of work ran, in order, and whether on the test's own thread ("on waiter") or another ("on queue").
    final class Runs: Sendable {
        let threads = Mutex<[String]>([])
        /// The test's thread, the one that waits; read-only after `init`.
        let waiter = pthread_self()
        func record(_ piece: String) {
            let thread = pthread_equal(pthread_self(), waiter) != 0 ? "on waiter" : "on queue"
            threads.locked { $0.append("\(piece) \(thread)") }
        }
        var all: [String] { threads.locked { $0 } }
    }

    /// A serial queue whose thread is held by an item until `release` is signalled.
    static func busyQueue() -> (DispatchQueue, release: DispatchSemaphore) {
        let queue = DispatchQueue(label: "background-work-test")
        let release = DispatchSemaphore(value: 0)
        let blocked = DispatchSemaphore(value: 0)
        queue.async {
            blocked.signal()
            release.wait()
        }
        blocked.wait()
        return (queue, release)
    }

    @Test(.timeLimit(.minutes(1)))
    func aWaiterDoesWorkTheBusyQueueHasNotStartedAndTheQueueSkipsItLater() {
        let (queue, release) = Self.busyQueue()
        let runs = Runs()
        let work = BackgroundWork(on: queue) { () -> Int in
            runs.record("work")
            return 42
        }
        // The queue is held by the first item: the result can only come from this thread.
        #expect(work.wait() == 42)
        #expect(runs.all == ["work on waiter"])
        release.signal()
        queue.sync {}
        #expect(runs.all == ["work on waiter"])
    }

    @Test func aWaiterWaitsForWorkTheQueueHasStarted() {
        let queue = DispatchQueue(label: "background-work-test")
        let started = DispatchSemaphore(value: 0)
        let finish = DispatchSemaphore(value: 0)
        let runs = Runs()
        let work = BackgroundWork(on: queue) { () -> [Int] in
            started.signal()
            finish.wait()
            runs.record("work")
            return [1, 2, 3]
        }
        started.wait()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { finish.signal() }
        #expect(work.wait() == [1, 2, 3])
        #expect(runs.all == ["work on queue"])
    }

    @Test(.timeLimit(.minutes(1)))
    func workMadeUnqueuedWaitsForItsQueueCall() {
        let queue = DispatchQueue(label: "background-work-test")
        let runs = Runs()
        let work = BackgroundWork(on: queue, queued: false) { () -> Int in
            runs.record("work")
            return 7
        }
        queue.sync {}
        #expect(runs.all.isEmpty)
        work.queue()
        queue.sync {}
        #expect(runs.all == ["work on queue"])
        #expect(work.wait() == 7)
        #expect(runs.all == ["work on queue"])
    }

    /// Work made unqueued and never queued (a commit that threw before queueing its encoding) is done by whoever
    /// waits for it, on the waiting thread.
    @Test(.timeLimit(.minutes(1)))
    func workNeverQueuedIsDoneByItsWaiter() {
        let queue = DispatchQueue(label: "background-work-test")
        let runs = Runs()
        let work = BackgroundWork(on: queue, queued: false) { () -> [UInt8] in
            runs.record("work")
            return [9, 8]
        }
        #expect(work.wait() == [9, 8])
        queue.sync {}
        #expect(runs.all == ["work on waiter"])
    }

    /// A commit's index changes run on the queue while its thread, done with the leaves, encodes the record queued
    /// behind them: the waiter takes the second piece instead of waiting idle for the first.
    @Test(.timeLimit(.minutes(1)))
    func aWaiterDoesTheNextPieceWhileTheQueueDoesTheOneItWaitsFor() {
        let queue = DispatchQueue(label: "background-work-test")
        let started = DispatchSemaphore(value: 0)
        let finish = DispatchSemaphore(value: 0)
        let runs = Runs()
        let first = BackgroundWork(on: queue) { () -> Int in
            started.signal()
            // Bounded, so that a waiter that does not help makes the test fail (the order below) rather than hang.
            _ = finish.wait(timeout: .now() + 10)
            runs.record("first")
            return 1
        }
        let second = BackgroundWork(on: queue, queued: false) { () -> Int in
            runs.record("second")
            // The first piece can finish only after this one ran: the waiter must not sit idle until then.
            finish.signal()
            return 2
        }
        second.queue()
        started.wait()
        #expect(first.wait(helping: second) == 1)
        #expect(second.wait() == 2)
        queue.sync {}
        #expect(runs.all == ["second on waiter", "first on queue"])
    }

    @Test(.timeLimit(.minutes(1)))
    func aWaiterDoesTheWorkItselfWhenTheQueueHasNotStartedItAndLeavesTheNextPiece() {
        let (queue, release) = Self.busyQueue()
        let runs = Runs()
        let first = BackgroundWork(on: queue) { () -> Int in
            runs.record("first")
            return 1
        }
        let second = BackgroundWork(on: queue, queued: false) { () -> Int in
            runs.record("second")
            return 2
        }
        second.queue()
        #expect(first.wait(helping: second) == 1)
        #expect(runs.all == ["first on waiter"])
        release.signal()
        #expect(second.wait() == 2)
        queue.sync {}
        // Whoever took the second piece (the queue once released, or its own waiter), it ran once.
        #expect(runs.all.count == 2)
        #expect(runs.all.first == "first on waiter")
        #expect(runs.all.last?.hasPrefix("second") == true)
    }
}

import CThreads
import Dispatch
import Foundation
import Synchronization

/// Items made in order on a thread of its own and taken in the same order by one consumer, so that making item k + 1
/// overlaps using item k: a checkpoint load decodes one chunk while it fills leaves from the one before.
///
/// At most one finished item waits for the consumer; the producer starts the next one as soon as it has handed one
/// over, and waits only when the consumer has not yet taken the last.
///
/// The consumer must call `close()` before it gives up the things `produce` uses (it stops the producer and waits for
/// its thread to end), and must not call `next()` again after taking the item marked last.
final class Pipeline<Item: Sendable>: Sendable {
    private struct State {
        var waiting: Item?
        var stopped = false
        var closed = false
    }

    private let state = LockedState(State())
    /// Posted once for every item handed over.
    private let filled = HandoffEvent()
    /// Posted when the waiting place is free again (it starts free).
    private let space = HandoffEvent(posted: 1)
    /// Signalled when the producer's thread has finished with `produce`.
    private let finished = DispatchSemaphore(value: 0)

    /// Starts a thread that calls `produce` until it returns an item marked last or the pipeline is closed.
    ///
    /// A dedicated thread, not a dispatch queue: a load that waited for a pool thread while the pool's threads waited
    /// for loads would never finish. The thread keeps off the consumer's CPU (when there is another it may use): on
    /// two cores, Linux started it on the consumer's CPU and left it there, the other core idle, and the two threads
    /// took turns.
    init(_ produce: @escaping @Sendable () -> (item: Item, last: Bool)) {
        let consumerCPU = trellis_current_cpu()
        let thread = Thread { [self] in
            _ = trellis_avoid_cpu(consumerCPU)
            while true {
                let (item, last) = produce()
                space.wait()
                let stopped = state.withLock { s in
                    if !s.stopped { s.waiting = item }
                    return s.stopped
                }
                if stopped { break }
                filled.post()
                if last || state.withLock({ $0.stopped }) { break }
            }
            finished.signal()
        }
        thread.name = "trellis.pipeline"
        thread.start()
    }

    /// The next item, waiting for it if the producer is behind.
    func next() -> Item {
        filled.wait()
        let item = state.withLock { $0.waiting.take() }
        space.post()
        guard let item else { preconditionFailure("Pipeline: an item was posted but none was waiting") }
        return item
    }

    /// Stops the producer after the item it is making, drops any item not taken, and returns once the producer's
    /// thread has finished. Later calls return at once.
    func close() {
        let first = state.withLock { s in
            defer { s.closed = true }
            s.stopped = true
            s.waiting = nil
            return !s.closed
        }
        guard first else { return }
        space.post()
        finished.wait()
    }
}

/// A value behind a lock that ThreadSanitizer understands (a pthread mutex): it reported `Mutex`'s futex-based
/// lock handing `Pipeline`'s state from one thread to the other as a race.
private final class LockedState<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

/// A count of posts that one thread waits on, spinning for a while before it sleeps.
///
/// A thread woken from sleep was put on its waker's CPU, in the waker's place: a waiter that spins sees the post
/// without a wake-up. A post wakes the waiter only when it has gone to sleep.
final class HandoffEvent: Sendable {
    private let count: Atomic<Int>
    private let sleeping = Atomic<Bool>(false)
    private let semaphore = DispatchSemaphore(value: 0)

    /// How many times `wait` yields its CPU, checking between yields, before it sleeps.
    static var spins: Int { 2000 }

    init(posted: Int = 0) {
        count = Atomic(posted)
    }

    func post() {
        count.add(1, ordering: .sequentiallyConsistent)
        if sleeping.load(ordering: .sequentiallyConsistent) { semaphore.signal() }
    }

    /// Takes one post, waiting for it if there is none. One thread at a time may wait.
    func wait() {
        for _ in 0..<Self.spins {
            if take() { return }
            sched_yield()
        }
        while true {
            sleeping.store(true, ordering: .sequentiallyConsistent)
            // Checked again after announcing sleep: a post that saw `sleeping` false left its count for this check.
            if take() {
                sleeping.store(false, ordering: .sequentiallyConsistent)
                return
            }
            semaphore.wait()
            sleeping.store(false, ordering: .sequentiallyConsistent)
            if take() { return }
        }
    }

    private func take() -> Bool {
        var current = count.load(ordering: .sequentiallyConsistent)
        while current > 0 {
            let (exchanged, original) = count.compareExchange(
                expected: current, desired: current - 1, ordering: .sequentiallyConsistent)
            if exchanged { return true }
            current = original
        }
        return false
    }
}

import Dispatch
import Synchronization

/// Runs `first` and `second` at the same time and returns both results: on two threads when the system has one free,
/// both on the calling thread otherwise (`DispatchQueue.concurrentPerform` runs what no other thread picks up), so
/// neither may wait for the other. Each result travels through a `Mutex`, which orders it before the return.
func inParallel<A: Sendable, B: Sendable>(_ first: @Sendable () -> A, _ second: @Sendable () -> B) -> (A, B) {
    let a = Mutex<A?>(nil)
    let b = Mutex<B?>(nil)
    DispatchQueue.concurrentPerform(iterations: 2) { i in
        if i == 0 {
            let result = first()
            a.withLock { $0 = result }
        } else {
            let result = second()
            b.withLock { $0 = result }
        }
    }
    // Taken, not copied: the caller holds the only reference to what the tasks built, and may mutate it in place.
    guard let resultA = a.withLock({ $0.take() }), let resultB = b.withLock({ $0.take() }) else {
        preconditionFailure("inParallel: concurrentPerform returned before both tasks ran")
    }
    return (resultA, resultB)
}

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

/// `body(0) ..< body(count)`, run at the same time on as many threads as the system has free, in index order.
func parallelMap<T: Sendable>(_ count: Int, _ body: @Sendable (Int) -> T) -> [T] {
    guard count > 1 else { return (0..<count).map(body) }
    let results = Mutex<[T?]>(Array(repeating: nil, count: count))
    DispatchQueue.concurrentPerform(iterations: count) { i in
        let result = body(i)
        results.withLock { $0[i] = result }
    }
    return results.withLock { results in
        results.map { result in
            guard let result else { preconditionFailure("parallelMap: concurrentPerform skipped a task") }
            return result
        }
    }
}

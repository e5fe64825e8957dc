#if TRELLIS_COUNT_NODES
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Counts the persistent-structure nodes (trie and sorted-tree nodes) one thread allocates while it measures, in
/// builds with `TRELLIS_COUNT_NODES` (debug builds, and CI's release test build): tests prove with it that a commit
/// costs what it changes (issue 22). Other release builds have no counter at all; with it, a node allocated on any
/// other thread costs two relaxed loads.
package enum NodeCount {
    private static let thread = Atomic<UInt>(0)
    private static let count = Atomic<Int>(0)

    private static var currentThread: UInt { UInt(bitPattern: Int(bitPattern: pthread_self())) }

    @inline(__always) static func allocated() {
        let measuring = thread.load(ordering: .relaxed)
        if measuring != 0 && measuring == currentThread { count.add(1, ordering: .relaxed) }
    }

    /// The nodes `body` allocated on this thread. One measurement at a time.
    package static func measure(_ body: () throws -> Void) rethrows -> Int {
        let (exchanged, _) = thread.compareExchange(expected: 0, desired: currentThread, ordering: .acquiring)
        precondition(exchanged, "NodeCount.measure: another measurement is running")
        count.store(0, ordering: .relaxed)
        defer { thread.store(0, ordering: .releasing) }
        try body()
        return count.load(ordering: .relaxed)
    }
}
#endif

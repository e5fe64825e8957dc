import Dispatch
import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// Keeps replaced versions alive for a short grace period, then lets them go: on a background queue, or, for a
/// version that a small commit replaced and a burst pushed out of `limit`, on the thread that publishes.
///
/// Whoever drops the last reference to a version frees the nodes only it holds, and after a cascade that deleted
/// 100,000 objects that takes tens of milliseconds. Without this, that would often be a reader: it takes the new
/// snapshot, drops the old one, and pays. With it, a reader that takes fresh snapshots never holds the last
/// reference; only one that keeps a snapshot for longer than the grace period frees it itself.
final class VersionReclaimer: Sendable {
    /// How long a replaced version is kept.
    static let grace: Double = 1.0
    /// How many replaced versions are kept at most (a burst of small commits replaces little each time).
    static let limit = 64

    /// Versions pushed out by `limit` that go to the queue are handed over this many at a time, so that a burst of
    /// big commits does not wake the queue's thread for each.
    static let overflowBatch = 32

    /// A version pushed out by `limit` whose replacing commit wrote fewer than this many objects goes back to the
    /// thread that retires it, to drop (see `ChangeSet.freedInlineBelow`).
    static let freedInlineBelow = ChangeSet.freedInlineBelow

    private let retired = Mutex<(list: [Retired], overflow: [Graph])>(([], []))
    private let queue = DispatchQueue(label: "trellis.reclaim", qos: .utility)

    /// A kept version: when it was replaced, and how many objects the replacing commit wrote.
    private struct Retired: Sendable {
        let time: UInt64
        let graph: Graph
        let changes: Int
    }

    /// How many replaced versions are being kept (for tests).
    var keptCount: Int { retired.locked { $0.list.count } }

    /// How many versions pushed out by `limit` wait for the next batch (for tests).
    var overflowCount: Int { retired.locked { $0.overflow.count } }

    /// The sequence numbers of the versions being kept, oldest first (for tests).
    var keptVersions: [UInt64] { retired.locked { $0.list.map(\.graph.sequence) } }

    /// The sequence numbers of the versions waiting for the next batch, oldest first (for tests).
    var overflowVersions: [UInt64] { retired.locked { $0.overflow.map(\.sequence) } }

    /// Takes over a version that was just replaced by a newer published one, whose commits wrote about `changes`
    /// objects (`ChangeSet.footprint`; `Int.max` when the new one shares nothing with it). Returns the version the
    /// caller lets go, if any: drop it outside any lock.
    func retire(_ graph: Graph, replacedBy changes: Int) -> Graph? {
        let now = DispatchTime.now().uptimeNanoseconds
        let (overflow, small, first) = retired.locked { state -> ([Graph], Graph?, Bool) in
            state.list.append(Retired(time: now, graph: graph, changes: changes))
            var small: Graph?
            if state.list.count > Self.limit {
                let out = state.list.removeFirst()
                if out.changes < Self.freedInlineBelow { small = out.graph } else { state.overflow.append(out.graph) }
            }
            var overflow: [Graph] = []
            if state.overflow.count >= Self.overflowBatch { swap(&overflow, &state.overflow) }
            return (overflow, small, state.list.count == 1)
        }
        if !overflow.isEmpty {
            // Handed over in a box the queue empties: had this thread kept its own reference to the batch, the queue
            // could finish first and leave the freeing of 32 versions to the commit that retired them.
            let batch = RetiredBatch(consume overflow)
            queue.async { batch.release() }
        }
        if first { schedule() }
        return small
    }

    /// Transactions with at least this many changed objects are handed to `dispose` once committed.
    static let disposedFrom = 256

    /// How long `dispose` holds what it is given: long enough that the committing thread has dropped its own
    /// references (the commit it returned shares the transaction's rows), so the last one is released here.
    static let disposeDelay = 0.05

    /// Releases `value` on the background queue a little later, so whoever gave it does not pay for freeing it.
    func dispose<T: Sendable>(_ value: consuming T) {
        let held = value
        queue.asyncAfter(deadline: .now() + Self.disposeDelay) { withExtendedLifetime(held) {} }
    }

    /// Lets every kept version go now, on the calling thread (a store that closes). Kept versions share most of
    /// their nodes with the published one, so whichever reference goes last frees the whole graph: left to the
    /// timer, that was the queue's thread, up to `grace` later, while the caller may already be loading the store
    /// again (and allocating from the heap that thread frees into).
    func drain() {
        let kept = retired.locked { state -> [Graph] in
            let kept = state.list.map(\.graph) + state.overflow
            state.list = []
            state.overflow = []
            return kept
        }
        withExtendedLifetime(kept) {}
    }

    private func schedule() {
        queue.asyncAfter(deadline: .now() + Self.grace) { [self] in
            let cutoff = DispatchTime.now().uptimeNanoseconds &- UInt64(Self.grace * 1e9)
            let (expired, more) = retired.locked { state -> ([Graph], Bool) in
                let n = state.list.prefix { $0.time <= cutoff }.count
                var expired = state.list.prefix(n).map(\.graph)
                state.list.removeFirst(n)
                expired += state.overflow
                state.overflow = []
                return (expired, !state.list.isEmpty)
            }
            // Released here, on this queue, outside the lock.
            withExtendedLifetime(expired) {}
            if more { schedule() }
        }
    }
}

/// Versions handed to the reclaimer's queue; whichever thread drops the box last, the versions go on the queue.
private final class RetiredBatch: Sendable {
    private let graphs: Mutex<[Graph]>

    init(_ graphs: consuming [Graph]) { self.graphs = Mutex(graphs) }

    /// Drops the versions on the calling thread.
    func release() {
        let taken = graphs.locked { graphs -> [Graph] in
            defer { graphs = [] }
            return graphs
        }
        withExtendedLifetime(taken) {}
    }
}

import Dispatch
import Synchronization

/// Bytes being encoded on another thread: a large commit encodes its inserts for the journal on the second core while
/// its own thread applies the same inserts to the graph.
final class EncodingAhead: Sendable {
    /// Commits with at least this many inserts encode them ahead; below it, handing the work over costs more than it
    /// saves.
    static let minimumInserts = 4096

    private let result = Mutex<[UInt8]?>(nil)
    private let done = DispatchSemaphore(value: 0)

    /// Starts `work` on a global queue at once.
    init(_ work: @escaping @Sendable () -> [UInt8]) {
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            let bytes = work()
            result.withLock { $0 = bytes }
            done.signal()
        }
    }

    /// The bytes, once `work` has returned them. Call at most once.
    func wait() -> [UInt8] {
        done.wait()
        return result.withLock { $0 } ?? []
    }
}

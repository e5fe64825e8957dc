import Dispatch
import Synchronization

/// Bytes being encoded on another thread: a large commit encodes its inserts (or updates) for the journal on the
/// second core while its own thread applies the same changes to the graph.
final class EncodingAhead: Sendable {
    /// Commits with at least this many inserts (or updates) encode them ahead; below it, handing the work over costs
    /// more than it saves.
    static let minimumChanges = 4096

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

/// Sections of a change record encoded ahead (see `ChangeSetCodec.encode(_:schema:ahead:)`); nil: encode it there.
struct EncodedSections {
    var inserts: [UInt8]?
    var updates: [UInt8]?
}

/// The sections a commit is encoding ahead.
struct SectionsAhead {
    var inserts: EncodingAhead?
    var updates: EncodingAhead?

    /// Waits for each section started.
    func wait() -> EncodedSections { EncodedSections(inserts: inserts?.wait(), updates: updates?.wait()) }
}

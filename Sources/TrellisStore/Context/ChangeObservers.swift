import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// The change callbacks and streams of a context that follows the store.
struct ChangeObservers {
    var handlers: [(flag: CancelFlag, handler: (ContextChanges) -> Void)] = []
    var streams: [(flag: CancelFlag, continuation: AsyncStream<ContextChanges>.Continuation)] = []
    /// Commits this context made itself: following them changes nothing it sees, so they are not reported.
    var ownSaves: Set<UInt64> = []
    /// Whether the context follows the store (only the view context does).
    var follows = false

    func finish() {
        for (_, continuation) in streams { continuation.finish() }
    }
}

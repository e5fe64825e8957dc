import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// The change callbacks and streams of a context, and the inbox the store files commits in for them.
struct ChangeObservers {
    var handlers: [(flag: CancelFlag, handler: (ContextChanges) -> Void)] = []
    var streams: [(flag: CancelFlag, continuation: AsyncStream<ContextChanges>.Continuation)] = []
    /// Commits this context made itself: following them changes nothing it sees, so they are not reported.
    var ownSaves: Set<UInt64> = []
    /// The commits filed for this context since it last moved; nil for a child context.
    var inbox: CommitInbox?
    /// Keeps the store filing commits in `inbox` (a root context other than the view context, whose box does).
    var subscription: ObservationToken?

    func finish() {
        for (_, continuation) in streams { continuation.finish() }
    }
}

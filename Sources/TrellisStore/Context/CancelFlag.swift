import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// Set when an observation is cancelled; the context drops the observer at its next delivery.
final class CancelFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isCancelled: Bool { flag.load(ordering: .acquiring) }
    func cancel() { flag.store(true, ordering: .releasing) }
}

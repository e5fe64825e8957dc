import Foundation
import TrellisCore
import TrellisGraph
import TrellisJournal

/// What opening a directory store produced, for `Store.init(directory:schema:options:)`.
struct OpenedStore {
    var graph: Graph
    /// The writer side; nil for a read-only open.
    var journal: Journal?
    var report: RecoveryReport
    /// The follower of a store opened with `StoreOptions.follow`; nil otherwise.
    var follower: JournalFollower? = nil
}

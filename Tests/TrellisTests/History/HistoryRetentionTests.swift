import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Retention that survives compaction: a policy keeps what it says through any number of compactions (and
/// reopens), and a token older than what is kept gets `.historyCompacted`, never a silent gap.
@Suite struct HistoryRetentionTests {
    static func commit(_ store: Store, _ k: Int) throws {
        var tx = store.transaction()
        try tx.insert("Folder", ["name": .string("f\(k)")])
        try store.commit(tx)
    }

    @Test func aPolicyOfNCommitsKeepsThemThroughCompactionsAndATooOldTokenIsRefused() throws {
        let temporary = TemporaryDirectory()
        let store = try HistoryFeedTests.open(temporary.store, retention: .commits(10))
        for k in 1...25 {
            try Self.commit(store, k)
            if k % 4 == 0 { try store.compact() }
        }
        try store.compact()
        // The last 10 commits (16…25) are kept; whole segments are, so a little more may be.
        let first = try store.historyRetention().firstRetained
        #expect(first <= 16 && first > 1)
        let kept = try store.history(since: HistoryToken(sequence: 15, storeID: try store.historyStoreID()))
        #expect(kept.map(\.sequence) == Array(16...25))
        #expect(kept.map { $0.changes.first?.newValue("name") } == (16...25).map { .string("f\($0)") })

        let error = #expect(throws: TrellisError.self) {
            try store.history(since: HistoryToken(sequence: 1, storeID: try store.historyStoreID()))
        }
        #expect(error?.code == .historyCompacted)
        #expect(error?.message.contains("history before sequence \(first) was compacted") == true)

        // Files the history keeps survive a reopen (recovery removes only what neither the manifest nor the history
        // file names).
        try store.close()
        let reopened = try HistoryFeedTests.open(temporary.store, retention: .commits(10))
        #expect(try reopened.historyRetention().firstRetained == first)
        #expect(try reopened.history(since: HistoryToken(sequence: first - 1, storeID: nil)).count == Int(26 - first))
    }

    @Test func withoutRetentionCompactionDropsTheHistoryAndSaysSo() throws {
        let temporary = TemporaryDirectory()
        let store = try HistoryFeedTests.open(temporary.store)
        for k in 1...5 { try Self.commit(store, k) }
        #expect(try store.history().count == 5)
        try store.compact()
        #expect(try store.history().isEmpty)
        let error = #expect(throws: TrellisError.self) {
            try store.history(since: HistoryToken(sequence: 2, storeID: nil))
        }
        #expect(error?.code == .historyCompacted)
        #expect(error?.message.contains("history before sequence 6 was compacted") == true)
        try Self.commit(store, 6)
        #expect(try store.history(since: HistoryToken(sequence: 5, storeID: nil)).map(\.sequence) == [6])
    }

    @Test func aConsumerHoldsTheHistoryUntilItAcknowledgesAndTheAcknowledgementSurvivesReopen() throws {
        let temporary = TemporaryDirectory()
        let retention = HistoryRetention.consumers(["sync"])
        var store = try HistoryFeedTests.open(temporary.store, retention: retention)
        for k in 1...6 {
            try Self.commit(store, k)
            try store.compact()
        }
        #expect(try store.history().map(\.sequence) == Array(1...6), "nothing acknowledged: everything kept")
        try store.acknowledgeHistory(consumer: "sync", token: HistoryToken(sequence: 4, storeID: nil))
        try store.close()
        store = try HistoryFeedTests.open(temporary.store, retention: retention)
        #expect(try store.historyRetention().acknowledged == ["sync": 4])
        try Self.commit(store, 7)
        try store.compact()
        let first = try store.historyRetention().firstRetained
        #expect(first <= 5 && first > 1, "records after the acknowledgement stay, those before it go")
        #expect(try store.history(since: HistoryToken(sequence: 4, storeID: nil)).map(\.sequence) == [5, 6, 7])
        // An acknowledgement never moves back.
        try store.acknowledgeHistory(consumer: "sync", token: HistoryToken(sequence: 2, storeID: nil))
        #expect(try store.historyRetention().acknowledged == ["sync": 4])
    }
}

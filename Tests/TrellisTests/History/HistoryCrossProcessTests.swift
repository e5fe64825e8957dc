import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Design invariants 12 and 14 for history tokens: a consumer stores its token, another process reopens the store,
/// commits and compacts it, and the consumer continues exactly where it stopped.
@Suite struct HistoryCrossProcessTests {
    final class Note: Model {
        @Attribute var uid = UUID()
        @Attribute var created = Date()
        @Attribute var text = ""
    }

    static func open(_ url: URL) throws -> Store {
        var options = StoreOptions(compaction: .manual)
        options.history = HistoryChildCommand.retention
        return try Store(directory: url, models: [Note.self], options: options)
    }

    /// Each change of `entry` as the child prints it; `uids` maps objects to their uid (learnt from inserts).
    static func lines(_ entry: HistoryTransaction, _ uids: inout [ObjectID: String]) -> [String] {
        entry.changes.map { change in
            if let uid = change.newValue(\Note.uid) { uids[change.objectID] = uid.uuidString }
            let uid = uids[change.objectID] ?? "?"
            switch change.kind {
            case .insert: return "insert \(entry.sequence) \(uid) \(change.newValue(\Note.text) ?? "?")"
            case .delete: return "delete \(entry.sequence) \(uid) \(change.oldValue(\Note.text) ?? "?")"
            case .update:
                return "update \(entry.sequence) \(uid) \(change.oldValue(\Note.text) ?? "?") "
                    + (change.newValue(\Note.text) ?? "?")
            }
        }
    }

    @Test func aConsumerContinuesExactlyWhereItStoppedAfterAnotherProcessCommittedAndCompacted() throws {
        let temporary = TemporaryDirectory()
        var store = try Self.open(temporary.store)
        let context = ModelContext(store)
        for text in ["one", "two"] {
            let note = Note()
            note.text = text
            context.insert(note)
            try context.save()
        }
        // The consumer reads what there is, keeps its token encoded and acknowledges it.
        let read = try store.history()
        #expect(read.map(\.sequence) == [1, 2])
        var uids: [ObjectID: String] = [:]
        let readLines = read.flatMap { Self.lines($0, &uids) }
        #expect(readLines.count == 2)
        let saved = try JSONEncoder().encode(try #require(read.last).token)
        try store.acknowledgeHistory(consumer: "sync", token: try #require(read.last).token)
        try store.close()

        // Another process: three rounds of inserts, renames, deletes, each followed by a compaction.
        let child = try CrashChild.run(["history-child", "--dir", temporary.store.path, "--commits", "3"])
        #expect(child.exitStatus == 0 && !child.killed, "\(child.lines)")
        let expected = child.lines.filter {
            $0.hasPrefix("insert ") || $0.hasPrefix("update ") || $0.hasPrefix("delete ")
        }
        #expect(child.lines.filter { $0.hasPrefix("compacted ") }.count == 3)
        #expect(expected.count == 3 + 3 + 1)

        // This process again: every change once, in order, with its old and new values, and the child's author.
        store = try Self.open(temporary.store)
        let token = try JSONDecoder().decode(HistoryToken.self, from: saved)
        let continued = try store.history(since: token)
        let continuedLines = continued.flatMap { Self.lines($0, &uids) }
        #expect(continuedLines == expected)
        #expect(continued.map(\.sequence) == Array(3...UInt64(2 + expected.count)))
        #expect(continued.allSatisfy { $0.author == "child" })
        #expect(try store.history(since: try #require(continued.last).token).isEmpty)
        #expect(try store.historyRetention().checkpointSequence == UInt64(2 + expected.count), "it did compact")
    }
}

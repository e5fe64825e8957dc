import Foundation
import Testing
import Trellis

/// `trellis info` says what a store retains of its history and why (format version 7's `HISTORY` file).
@Suite struct HistoryInfoTests {
    @Test func infoShowsTheRetainedHistoryTheRuleAndTheAcknowledgements() throws {
        let directory = Fixture.newDirectory()
        defer { Fixture.cleanUp(directory) }
        let schema = try Schema([EntityDescription("Item", attributes: [AttributeDescription("n", .int)])])
        var options = StoreOptions(compaction: .manual)
        options.history = HistoryRetention(commits: 3, consumers: ["sync"])
        let store = try Store(directory: directory, schema: schema, options: options)
        for k in 1...6 {
            try store.write { tx in try tx.insert("Item", ["n": .int(Int64(k))]) }
            if k % 2 == 0 { try store.compact() }
        }
        try store.acknowledgeHistory(consumer: "sync", token: HistoryToken(sequence: 2, storeID: nil))
        let id = try #require(try store.historyStoreID())
        try store.close()

        let text = try Tool.run(["info", directory.path])
        #expect(text.status == 0, "\(text)")
        let line = try #require(text.stdout.split(separator: "\n").first { $0.hasPrefix("history     ") })
        #expect(line.hasPrefix("history     from sequence 1 (kept beyond the journal: the empty store, checkpoint 2"))
        #expect(line.contains("retention at the last compaction: the last 3 commits; until acknowledged by sync"))
        #expect(line.contains("acknowledged: sync 2") && line.contains(id.uuidString))
        #expect(text.stdout.contains("retained history") && !text.stdout.contains("orphan"), "\(text.stdout)")

        let json = try Tool.run(["info", directory.path, "--json"]).json()
        let history = try #require(json["history"] as? [String: Any])
        #expect(history["firstRetained"] as? Int == 1)
        #expect(history["acknowledged"] as? [String: Int] == ["sync": 2])
        #expect(history["storeID"] as? String == id.uuidString)
    }

    /// The commit's author (`Transaction.author`, a context's `transactionAuthor`) shows in `dump` and `history`, as
    /// text and as JSON; a commit without one shows none (`null`).
    @Test func dumpAndHistoryShowEachCommitsAuthor() throws {
        let directory = Fixture.newDirectory()
        defer { Fixture.cleanUp(directory) }
        let schema = try Schema([EntityDescription("Item", attributes: [AttributeDescription("n", .int)])])
        let store = try Store(directory: directory, schema: schema, options: StoreOptions(compaction: .manual))
        let id = try store.write { tx in
            tx.author = "importer"
            return try tx.insert("Item", ["n": .int(1)])
        }
        try store.write { tx in try tx.set(id, "n", .int(2)) }
        try store.close()

        let dump = try Tool.run(["dump", directory.path])
        #expect(dump.status == 0, "\(dump)")
        let headings = dump.stdout.split(separator: "\n").filter { $0.hasPrefix("#") }
        #expect(headings.count == 2, "\(dump.stdout)")
        #expect(headings.first?.hasSuffix("  by \"importer\"") == true, "\(dump.stdout)")
        #expect(headings.last?.contains(" by ") == false, "\(dump.stdout)")
        let records = try #require(
            try Tool.run(["dump", directory.path, "--json"]).json()["records"] as? [[String: Any]])
        #expect(records.map { $0["author"] as? String } == ["importer", nil])
        #expect(records.last?["author"] is NSNull)

        let history = try Tool.run(["history", directory.path, "Item#1"])
        #expect(history.status == 0, "\(history)")
        let lines = history.stdout.split(separator: "\n").filter { $0.hasPrefix("  #") }
        #expect(lines.count == 2, "\(history.stdout)")
        #expect(lines.first?.contains("  by \"importer\"  insert  ") == true, "\(history.stdout)")
        #expect(
            lines.last?.contains(" by ") == false && lines.last?.contains("  update  ") == true, "\(history.stdout)")
        let changes = try #require(
            try Tool.run(["history", directory.path, "Item#1", "--json"]).json()["changes"] as? [[String: Any]])
        #expect(changes.map { $0["author"] as? String } == ["importer", nil])
    }
}

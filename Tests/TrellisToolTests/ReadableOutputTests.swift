import Foundation
import Testing

/// The readable (default) output of `info`, `dump`, `history`, `stats` and `compact` on a known store.
@Suite struct ReadableOutputTests {
    @Test func infoDescribesSchemaCountsAndSegments() throws {
        let store = try JSONOutputTests.store()
        defer { Fixture.cleanUp(store) }
        let result = try Tool.run(["info", store.path])
        #expect(result.status == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "store       \(store.path)")
        #expect(lines.contains("    notes → [Note] (inverse folder, delete rule cascade)"))
        #expect(lines.contains("    index (stars)"))
        #expect(lines.contains("objects     Folder 1, Note 4 (as of sequence 8)"))
        #expect(
            lines.contains {
                $0.hasPrefix("  segment-0000000000000001.trj") && $0.hasSuffix("sequences 1…8 (8 records)")
            })
        #expect(lines.contains("checkpoint  none (the journal holds every commit since the store was created)"))
    }

    @Test func infoSaysHowFarTheManifestRecordsTheJournalAsDurable() throws {
        let store = try JSONOutputTests.store()
        defer { Fixture.cleanUp(store) }
        func durableLine() throws -> String? {
            try Tool.run(["info", store.path]).stdout.split(separator: "\n").map(String.init).first {
                $0.hasPrefix("durable     ")
            }
        }
        // Closed cleanly: the manifest records all 8 records.
        #expect(try durableLine() == "durable     through sequence 8 (on the manifest's record)")
        // A process that stopped without closing: records after the manifest's mark are counted.
        try StoreFile.setDurableSequence(store, 5)
        #expect(try durableLine() == "durable     through sequence 5 (on the manifest's record; 3 later records since)")
        try StoreFile.forgetCleanClose(store)
        #expect(
            try durableLine()
                == "durable     nothing recorded yet (no clean close, rotation or compaction since format version 5)")
        // A journal that ends before the mark lost records, and info says so.
        try StoreFile.setDurableSequence(store, 8)
        let last = try #require(try Fixture.records(store).last)
        try StoreFile(store, last.file).truncate(to: last.offset)
        #expect(
            try durableLine()
                == "durable     through sequence 8 (on the manifest's record; the journal ends at 7: records are "
                + "missing, run `trellis verify`)")
    }

    @Test func dumpShowsOneRowPerChangeWithOldAndNewValues() throws {
        let store = try JSONOutputTests.store()
        defer { Fixture.cleanUp(store) }
        let result = try Tool.run(["dump", store.path, "--from", "7"])
        #expect(result.status == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(result)")
        #expect(lines[0].hasPrefix("#7  "))
        #expect(lines[1].hasPrefix("    update  Note#2         title: \"note 2"))
        #expect(lines[1].hasSuffix("→ \"renamed\""))
        #expect(lines[2].hasPrefix("#8  "))
        #expect(lines[3].hasPrefix("    delete  Note#3         title=\"note 3"))
        #expect(lines[3].hasSuffix("; folder → [Folder#1]"))

        let one = try Tool.run(["dump", store.path, "--object", "Note#1"])
        #expect(one.stdout.split(separator: "\n").filter { $0.hasPrefix("#") }.count == 1)
        let folders = try Tool.run(["dump", store.path, "--entity", "Folder"])
        #expect(folders.stdout.contains("insert  Folder#1       name=\"Inbox\""), "\(folders)")
    }

    @Test func historyListsTheObjectsChangesInOrder() throws {
        let store = try JSONOutputTests.store()
        defer { Fixture.cleanUp(store) }
        let result = try Tool.run(["history", store.path, "Note#2"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines[0] == "history of Note#2 in \(store.path)")
        #expect(lines.count == 4)
        #expect(lines[1].hasPrefix("  #3  ") && lines[1].contains("insert  title=\"note 2"))
        #expect(lines[2].hasPrefix("  #3  ") && lines[2].hasSuffix("link  folder → Folder#1"))
        #expect(lines[3].hasPrefix("  #7  ") && lines[3].hasSuffix("→ \"renamed\""))
    }

    @Test func dataValuesShowTheirSizeAndFirstBytesInHex() throws {
        let store = try TaskFixture.make()
        defer { Fixture.cleanUp(store) }
        let dump = try Tool.run(["dump", store.path])
        #expect(dump.status == 0, "\(dump)")
        let rows = dump.stdout.split(separator: "\n").map(String.init)
        func row(_ prefix: String) -> String { rows.first { $0.hasPrefix(prefix) } ?? "" }
        #expect(row("    insert  Task#1 ").contains(", blob=<5 bytes: 48656c6c6f>, "), "\(dump)")
        // Past eight bytes the hex is cut.
        #expect(row("    insert  Task#2 ").contains(", blob=<12 bytes: 48656c6c6f20776f…>, "), "\(dump)")
        #expect(row("    insert  Task#4 ").contains(", blob=<0 bytes>, "), "\(dump)")
        #expect(row("    update  Task#3 ").hasSuffix("blob: null → <2 bytes: 00ff>"), "\(dump)")
        let history = try Tool.run(["history", store.path, "Task#3"])
        #expect(history.stdout.contains("  update  blob: null → <2 bytes: 00ff>\n"), "\(history)")
        let find = try Tool.run(["find", store.path, "Task", "--where", "stars == 5"])
        #expect(find.stdout.contains(", blob=<12 bytes: 48656c6c6f20776f…>, "), "\(find)")
        // JSON keeps every byte, as base64.
        let json = try Tool.run(["dump", store.path, "--json"]).json()
        let records = try #require(json["records"] as? [[String: Any]])
        let update = try #require((records[2]["updates"] as? [[String: Any]])?.first)
        #expect((update["changes"] as? [[String: Any]])?.first?["new"] as? String == "AP8=")
    }

    @Test func statsDrawsHistograms() throws {
        let store = try JSONOutputTests.store()
        defer { Fixture.cleanUp(store) }
        let result = try Tool.run(["stats", store.path])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("stats \(store.path): 8 records\nrecord sizes (stored):\n"))
        #expect(result.stdout.contains("█"))
        #expect(result.stdout.contains("  Note: 5 inserts, 1 updates, 5 link edits, 1 deletes; "))
    }

    @Test func compactPrintsSizesAndTheStoreStillVerifies() throws {
        let store = try JSONOutputTests.store()
        defer { Fixture.cleanUp(store) }
        let result = try Tool.run(["compact", store.path])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.hasPrefix("compacted \(store.path): "))
        #expect(result.stdout.contains("checkpoint at sequence 8"))
        let verify = try Tool.run(["verify", store.path, "--json"]).json()
        #expect(verify["clean"] as? Bool == true)
        #expect(verify["checkpointSequence"] as? Int == 8)
        #expect(verify["objectCounts"] as? [String: Int] == ["Folder": 1, "Note": 4])
        let history = try Tool.run(["history", store.path, "Note#2"])
        #expect(history.stdout.contains("at checkpoint (sequence 8): title=\"renamed\""), "\(history)")
        let early = try Tool.run(["export", store.path, "--as-of", "3"])
        #expect(early.status == 1)
        #expect(early.stderr.contains("the earliest --as-of is 8"))
    }
}

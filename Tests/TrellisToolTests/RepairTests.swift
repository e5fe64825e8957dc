import Foundation
import Testing
import Trellis

/// `repair` backs up, says what it drops, asks, repairs; the store then verifies and opens with the expected prefix,
/// and a second run changes nothing.
@Suite struct RepairTests {
    /// A six-commit store whose last record is torn: five whole commits (Folder#1, Note#1…4) survive.
    func tornStore() throws -> (URL, JournalRecord) {
        let store = try Fixture.make(Fixture.newDirectory())
        let last = try #require(try Fixture.records(store).last)
        try StoreFile.forgetCleanClose(store)
        try StoreFile(store, last.file).truncate(to: last.offset + 20)
        return (store, last)
    }

    @Test func truncateTailThenVerifyIsCleanAndTheStoreOpensWithTheFiveCommitPrefix() throws {
        let (store, last) = try tornStore()
        defer { Fixture.cleanUp(store) }
        let repair = try Tool.run(["repair", store.path, "--truncate-tail", "--yes"])
        #expect(repair.status == 0, "\(repair)")
        #expect(repair.stdout.contains("20 bytes at the end of \(last.file), from offset \(last.offset)"), "\(repair)")
        #expect(repair.stdout.contains("the store will hold the commits through sequence 5: Folder 1, Note 4"))
        #expect(repair.stdout.contains("backed up to \(store.path).backup-"), "\(repair)")
        #expect(repair.stdout.hasSuffix("clean: no problems\n"), "\(repair)")

        #expect(try Tool.run(["verify", store.path]).status == 0)
        let opened = try Store(
            directory: store, schema: Fixture.schema, options: StoreOptions(recovery: .strict, readOnly: true))
        #expect(opened.snapshot.sequence == 5)
        #expect(try opened.snapshot.count("Note") == 4)
        let titles = try opened.snapshot.objectIDs("Note").map { try opened.snapshot.value($0, "title")?.stringValue }
        #expect(titles.map { $0?.prefix(6) } == ["note 1", "note 2", "note 3", "note 4"])

        let backups = try FileManager.default.contentsOfDirectory(atPath: store.deletingLastPathComponent().path)
        #expect(backups.contains { $0.hasPrefix("store.backup-") }, "\(backups)")

        let again = try Tool.run(["repair", store.path, "--truncate-tail", "--yes"])
        #expect(again.status == 0)
        #expect(again.stdout == "nothing to repair: \(store.path) is clean\n", "\(again)")
        #expect(try Tool.run(["verify", store.path]).status == 0)
    }

    @Test func repairWithoutConfirmationRefusesAndChangesNothing() throws {
        let (store, last) = try tornStore()
        defer { Fixture.cleanUp(store) }
        let before = try StoreFile(store, last.file).bytes()
        let refused = try Tool.run(["repair", store.path, "--truncate-tail"])  // stdin: empty
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("not confirmed; nothing was changed"), "\(refused)")
        #expect(try StoreFile(store, last.file).bytes() == before)
        let said = try Tool.run(["repair", store.path, "--truncate-tail"], stdin: "n\n")
        #expect(said.status == 1)
        #expect(try Tool.run(["verify", store.path]).status == 1)
        let yes = try Tool.run(["repair", store.path, "--truncate-tail"], stdin: "y\n")
        #expect(yes.status == 0, "\(yes)")
    }

    @Test func truncateTailRefusesMidJournalDamageAndPointsToSalvage() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let third = try Fixture.records(store)[2]
        try StoreFile(store, third.file).flip(at: third.offset + 40 + 3)
        let refused = try Tool.run(["repair", store.path, "--truncate-tail", "--yes"])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stdout.contains("--salvage"), "\(refused)")

        let salvaged = try Tool.run(["repair", store.path, "--salvage", "--yes"])
        #expect(salvaged.status == 0, "\(salvaged)")
        #expect(salvaged.stdout.contains("the commits with sequence numbers 3"), "\(salvaged)")
        #expect(try Tool.run(["verify", store.path]).status == 0)
        #expect(try Tool.run(["repair", store.path, "--salvage", "--yes"]).status == 0)
    }

    @Test func truncateTailDropsAnUnacknowledgedHoleAndWhatFollowsIt() throws {
        // Records 4…6 written in one unsynced batch after record 3 was durable (watermark 3), and record 4 lost:
        // the hole a power cut over preallocated space leaves. Nothing after it was acknowledged.
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        try StoreFile.forgetCleanClose(store)
        let records = try Fixture.records(store)
        let (lost, file) = (records[3], StoreFile(store, records[3].file))
        for record in records[4...] { try file.setWatermark(3, at: record.offset) }
        try file.zero(at: lost.offset, count: lost.frameBytes)

        let verify = try Tool.run(["verify", store.path])
        #expect(verify.status == 1, "\(verify)")
        #expect(verify.stdout.contains("\(lost.file) at offset \(lost.offset): unacknowledged hole: "), "\(verify)")
        #expect(verify.stdout.contains("--truncate-tail"), "\(verify)")
        let repair = try Tool.run(["repair", store.path, "--truncate-tail", "--yes"])
        #expect(repair.status == 0, "\(repair)")
        #expect(
            repair.stdout.contains(
                "from offset \(lost.offset): an unacknowledged hole and the 2 unacknowledged records"),
            "\(repair)")
        #expect(repair.stdout.contains("the store will hold the commits through sequence 3"), "\(repair)")
        #expect(repair.stdout.hasSuffix("clean: no problems\n"), "\(repair)")
        let opened = try Store(
            directory: store, schema: Fixture.schema, options: StoreOptions(recovery: .strict, readOnly: true))
        #expect(opened.snapshot.sequence == 3)
    }
}

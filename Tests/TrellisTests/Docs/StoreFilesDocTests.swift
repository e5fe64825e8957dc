import Foundation
import Testing
import Trellis

/// The examples of "Durability and Recovery" and "The Store Directory and the trellis Tool"
/// (Trellis.docc/DurabilityAndRecovery.md, StoreDirectoryAndTool.md), verbatim, run and checked (see `ReadmeTests`
/// for how). `Project` and `Chore` are the test module's models.
@Suite struct StoreFilesDocTests {
    @Test func aStoreWithIntervalDurabilityKeepsWhatItCommittedOnceClosed() throws {
        let url = DocsScratch.directory()
        defer { DocsScratch.remove(url) }

        let store = try Store(
            directory: url, models: [Project.self, Chore.self],
            options: StoreOptions(durability: .interval(1)))

        let context = ModelContext(store)
        context.insert(Chore(title: "kept"))
        try context.save()
        try store.close()
        let reopened = try Store(directory: url, models: [Project.self, Chore.self])
        #expect(try ModelContext(reopened).fetch(FetchDescriptor<Chore>()).map(\.title) == ["kept"])
        try reopened.close()
    }

    /// Bytes after the last record, as a crash during an append leaves them: the open drops and backs them up, and the
    /// example logs it.
    @Test func theRecoveryReportNamesTheDroppedTornTailAndItsBackup() throws {
        var logged: [String] = []
        func log(_ line: String) { logged.append(line) }
        let url = DocsScratch.directory()
        defer { DocsScratch.remove(url) }
        do {
            let store = try Store(directory: url, models: [Project.self, Chore.self])
            try store.write { tx in _ = try tx.insert("Chore", ["title": "saved"]) }
            #expect(store.recoveryReport?.droppedBytes == 0)
            try store.close()
        }
        let segment = try #require(Self.segments(url).last)
        let handle = try FileHandle(forWritingTo: segment)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 0xA7, count: 100))
        try handle.close()
        let store = try Store(directory: url, models: [Project.self, Chore.self])

        if let report = store.recoveryReport, report.droppedBytes > 0 {
            log("dropped a torn tail of \(report.droppedBytes) bytes; backup in \(report.tailBackup ?? "-")")
        }

        // The tail runs from the end of the last record, over the space the writer had reserved, to the bytes added.
        let report = try #require(store.recoveryReport)
        let backup = try #require(report.tailBackup)
        #expect(report.droppedBytes >= 100)
        #expect(logged == ["dropped a torn tail of \(report.droppedBytes) bytes; backup in \(backup)"])
        let dropped = try Data(contentsOf: url.appending(path: backup))
        #expect(dropped.count == report.droppedBytes && dropped.suffix(100) == Data(repeating: 0xA7, count: 100))
        #expect(try store.snapshot.count("Chore") == 1)
        try store.close()
    }

    /// The diagnostics example on two stores: one migrated once (it lists the migration), one with a flipped byte in
    /// a record (it lists the damage).
    @Test func theJournalReaderListsTheDamageOfOneStoreAndTheMigrationOfAnother() throws {
        let printed = Printed()
        func print(_ items: Any...) { printed.append(items) }

        // swift-format-ignore
        func diagnose(_ url: URL) throws {
            let reader = try JournalReader(directory: url)
            let verification = try reader.verify()
            if !verification.isClean {
                for problem in verification.problems { print(problem) }   // file, offset, class, message
            }
            for migration in try reader.migrations() {
                print(migration.summary.sequence, migration.summary.steps)
            }
        }

        let migrated = DocsScratch.directory()
        defer { DocsScratch.remove(migrated) }
        let first = try Schema([EntityDescription("Item", attributes: [AttributeDescription("name", .string)])])
        try Self.write(at: migrated, first, names: ["a", "b"])
        let second = try Schema([
            EntityDescription(
                "Item",
                attributes: [AttributeDescription("name", .string), AttributeDescription("rank", .int, default: 0)])
        ])
        try Self.write(at: migrated, second, names: [])
        try diagnose(migrated)
        #expect(printed.lines.count == 1)
        #expect(printed.lines.first?.hasPrefix("3 [") == true, "the migration after the two commits")
        #expect(printed.lines.first?.contains("rank") == true)

        let damaged = DocsScratch.directory()
        defer { DocsScratch.remove(damaged) }
        try Self.write(at: damaged, first, names: ["a", "b", "c"])
        let segment = try #require(Self.segments(damaged).first)
        var bytes = try Data(contentsOf: segment)
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: segment)
        try diagnose(damaged)
        #expect(printed.lines.count >= 2)
        #expect(printed.lines[1].contains(segment.lastPathComponent))
    }

    /// Opens (or creates) a store with the schema, inserts one item per name in a commit each, closes it.
    private static func write(at url: URL, _ schema: Schema, names: [String]) throws {
        let store = try Store(directory: url, schema: schema)
        for name in names { try store.write { tx in _ = try tx.insert("Item", ["name": .string(name)]) } }
        try store.close()
    }

    /// The journal segments of a store directory, oldest first.
    private static func segments(_ url: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).filter { $0.hasPrefix("segment-") }.sorted()
            .map { url.appending(path: $0) }
    }
}

import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Design invariants 11 and 12 across processes: a store written by one process opens in another whose model classes
/// compute different defaults, and a store seeded by one process, migrated by another and read by a third holds
/// exactly what the same migration gives in one process (`trellis-crashtest` is the other process).
@Suite struct MigrationCrossProcessTests {
    typealias X = CrashExpectations

    /// The test process's copy of the child's `Note` (same name, same declarations, so the same entity).
    final class Note: Model {
        @Attribute var uid = UUID()
        @Attribute var created = Date()
        @Attribute var text = ""
    }

    /// A note as a child printed it: `note <uid>\t<created>\t<text>`.
    struct PrintedNote: Equatable {
        var uid: String
        var created: String
        var text: String

        init(uid: String, created: String, text: String) {
            (self.uid, self.created, self.text) = (uid, created, text)
        }

        init?(_ line: String) {
            guard line.hasPrefix("note ") else { return nil }
            let fields = line.dropFirst(5).split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 3 else { return nil }
            (uid, created, text) = (fields[0], fields[1], fields[2])
        }
    }

    static func notes(_ outcome: CrashChild.Outcome) -> [PrintedNote] { outcome.lines.compactMap(PrintedNote.init) }

    @Test("defaults computed per process (UUID(), Date()) never stop another process opening the store")
    func aStoreOfModelsWithComputedDefaultsOpensInEveryLaterProcess() throws {
        let temporary = TemporaryDirectory()
        let store = temporary.store
        let first = try CrashChild.run(["notes", "--dir", store.path, "--add", "first note"])
        #expect(first.exitStatus == 0 && !first.killed, "\(first.lines)")
        let firstNotes = Self.notes(first)
        #expect(firstNotes.map(\.text) == ["first note"])
        #expect(first.lines.suffix(2) == ["migrations 0", "closed 1"])

        // A second process: its Note's defaults differ from the ones the store's schema was written with.
        let second = try CrashChild.run(["notes", "--dir", store.path, "--add", "second note"])
        #expect(
            second.exitStatus == 0 && !second.killed, "the second process could not open the store: \(second.lines)")
        let secondNotes = Self.notes(second)
        #expect(secondNotes.map(\.text) == ["first note", "second note"])
        #expect(secondNotes.first == firstNotes.first, "the first note's uid and date are what the first process saved")
        #expect(Set(secondNotes.map(\.uid)).count == 2, "each note got its own UUID()")
        #expect(second.lines.suffix(2) == ["migrations 0", "closed 2"], "defaults are no schema change")

        // This process, with its own defaults, reads the same values and adds a third note.
        let opened = try Store(directory: store, models: [Note.self])
        #expect(opened.schema.history.isEmpty)
        let context = ModelContext(opened)
        let fetched = try context.fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.created)]))
        #expect(
            fetched.map {
                PrintedNote(uid: $0.uid.uuidString, created: "\($0.created.timeIntervalSince1970)", text: $0.text)
            }
                == secondNotes)
        #expect(fetched.first.map { "\($0.created.timeIntervalSince1970)" } == firstNotes.first?.created)
        let third = Note()
        third.text = "third note"
        context.insert(third)
        try context.save()
        let thirdLine = PrintedNote(
            uid: third.uid.uuidString, created: "\(third.created.timeIntervalSince1970)", text: "third note")
        try opened.close()

        // And a third process reads all three, unchanged.
        let last = try CrashChild.run(["notes", "--dir", store.path])
        #expect(last.exitStatus == 0, "\(last.lines)")
        #expect(Self.notes(last) == secondNotes + [thirdLine])
        #expect(last.lines.suffix(2) == ["migrations 0", "closed 3"])
        #expect(try X.problems(store) == [])
    }

    /// The fixtures' v1 store seeded in this process on a simulated disk, closed: the disk, the graph, the people.
    static func referenceV1() throws -> (SimulatedFileLayer, Graph, [ObjectID]) {
        let disk = SimulatedFileLayer()
        let store = try Store(directory: simulatedStore, schema: try MigrationFixtures.v1(), options: options(disk))
        let people = try MigrationFixtures.seed(store)
        try store.close()
        return (disk, store.snapshot, people)
    }

    static let simulatedStore = URL(fileURLWithPath: SimulatedFileLayer.storePath)

    static func options(_ disk: SimulatedFileLayer, readOnly: Bool = false) -> StoreOptions {
        var options = StoreOptions(readOnly: readOnly)
        options.fileLayer = disk
        return options
    }

    @Test(
        "each inferred step migrates a store seeded by another process, and a third process reads the result",
        arguments: LightweightCase.all)
    func eachInferredStepMigratesAStoreSeededInAnotherProcess(step: LightweightCase) throws {
        let temporary = TemporaryDirectory()
        let store = temporary.store
        let seeded = try CrashChild.run(["seed-contacts", "--dir", store.path])
        #expect(seeded.lines == ["seeded 1"])

        // The child's copy of the seed is the fixtures' seed: every object, value, link and ID.
        let (referenceDisk, v1, people) = try Self.referenceV1()
        do {
            let read = try Store(directory: store, schema: try MigrationFixtures.v1(), options: .init(readOnly: true))
            #expect(read.snapshot.differences(from: v1) == [], "the child's seed is not the one this process writes")
            #expect(read.snapshot.maxSerials == v1.maxSerials)
        }

        // The same migration in this process, on the reference disk: what the migrated store must equal.
        let v2 = try step.v2()
        let reference = try Store(directory: Self.simulatedStore, schema: v2, options: Self.options(referenceDisk))
        try step.check(reference, people)
        let expected = reference.snapshot
        try reference.close()

        let migrated = try Store(directory: store, schema: v2)
        #expect(migrated.schema.history.count == 1)
        #expect(migrated.snapshot.sequence == 2, "the migration is one record after the seed")
        try step.check(migrated, people)
        #expect(migrated.snapshot.differences(from: expected) == [])
        #expect(migrated.snapshot.maxSerials == expected.maxSerials, "IDs are kept and none is reused")
        #expect(migrated.snapshot.invariantViolations() == [])
        try migrated.close()

        // Another process opens the migrated store with the schema it holds and prints everything in it.
        let dumped = try CrashChild.run(["dump", "--dir", store.path])
        #expect(dumped.exitStatus == 0, "\(dumped.lines.suffix(2))")
        let reopened = try Store(directory: store, schema: v2)
        #expect(dumped.lines == (try ContactsFixture.dump(reopened.snapshot)))
        #expect(dumped.lines == (try ContactsFixture.dump(expected)))
        #expect(dumped.lines.first?.hasSuffix("migrations 1") == true, "\(dumped.lines.first ?? "")")
        #expect(reopened.snapshot.differences(from: expected) == [])
        try step.check(reopened, people)
        try reopened.close()
        let problems = try X.problems(store)
        #expect(problems == [], "trellis verify on the migrated store: \(problems)")
    }
}

import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// A migration is one atomic switch (design invariant 11) that survives crashes: after a crash anywhere in a migrating
/// open of a v1 contacts store with `ContactsFixture.v2` (a column of defaults, a rename, a new index), the store is
/// exactly the old one or exactly the migrated one, never a mix; `trellis verify` finds only what a crash leaves; and
/// the next open with v2 succeeds with the v2 data. Harness F replays every prefix of the open's file operations;
/// harness K kills a child process at the migration's named points and at random moments.
@Suite struct MigrationCrashTests {
    typealias X = CrashExpectations

    /// The two states a migration may leave, as graphs: the seeded v1 store and the same store migrated to v2.
    struct States {
        var v1: Graph
        var v2: Graph

        /// Seeds `people` people in this process on a simulated disk (with `checkpoint`, compacts after the seed and
        /// renames team 0 in a second commit, so the migration follows a checkpoint and a record), closes it, and
        /// migrates a copy. Returns the closed v1 disk too.
        static func make(people: Int, checkpoint: Bool = false) throws -> (States, SimulatedFileLayer) {
            let disk = SimulatedFileLayer()
            let store = try Store(directory: directoryURL, schema: ContactsFixture.v1, options: X.options(disk))
            try ContactsFixture.seed(store, people: people)
            if checkpoint {
                try store.compact()
                try store.write { tx in
                    try tx.set(ObjectID(entity: 0, serial: 1), "title", .string("team 0, renamed"))
                }
            }
            try store.close()
            let migrating = disk.copy()
            let migrated = try Store(directory: directoryURL, schema: ContactsFixture.v2, options: X.options(migrating))
            let states = States(v1: store.snapshot, v2: migrated.snapshot)
            try migrated.close()
            return (states, disk)
        }
    }

    enum Found: Equatable {
        case old
        case new
    }

    static let directoryURL = URL(fileURLWithPath: X.directory)

    /// Checks that the store at `directory` on `layer` holds exactly one of `states`, and which. The manifest, the
    /// stored schema and the data must agree: v1's fingerprint with exactly the v1 data, no history and the v1
    /// sequence; or v2's with exactly the v2 data and one migration in the history.
    static func expectOldOrNew(
        _ layer: any FileLayer, _ directory: String, _ states: States, _ context: @autoclosure () -> String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Found {
        var options = StoreOptions(readOnly: true)
        options.fileLayer = layer
        let manifest = try JournalReader(path: directory, layer: layer).manifest()
        X.expectOnlyCrashDamage(
            try JournalReader(path: directory, layer: layer).verify().problems, context(),
            sourceLocation: sourceLocation)
        let stored = try StoreOpener.readWithoutLock(layer: layer, directory: directory, options: options).graph
        #expect(manifest.fingerprint == stored.schema.fingerprint, "\(context())", sourceLocation: sourceLocation)
        let found: Found
        let expected: Graph
        if stored.schema.fingerprint == states.v1.schema.fingerprint {
            (found, expected) = (.old, states.v1)
            #expect(stored.schema.history.isEmpty, "\(context())", sourceLocation: sourceLocation)
        } else {
            (found, expected) = (.new, states.v2)
            #expect(
                stored.schema.fingerprint == states.v2.schema.fingerprint, "neither v1 nor v2: \(context())",
                sourceLocation: sourceLocation)
            #expect(stored.schema.history.count == 1, "\(context())", sourceLocation: sourceLocation)
        }
        // The stored schema lacks what only the app's declares (original names); the structure is the same.
        let data = stored.withSchema(expected.schema)
        #expect(
            X.problems(data, comparedWith: expected) == [], "not exactly the \(found) store: \(context())",
            sourceLocation: sourceLocation)
        #expect(data.sequence == expected.sequence, "\(context())", sourceLocation: sourceLocation)
        #expect(data.maxSerials == expected.maxSerials, "\(context())", sourceLocation: sourceLocation)
        return found
    }

    /// Opens the store with v2 (migrating it when it is old): it opens, with exactly the v2 data, takes a commit, and
    /// a reopen holds that commit with nothing left for verify to report.
    static func expectV2Opens(
        _ layer: any FileLayer, _ directory: String, _ states: States, _ context: @autoclosure () -> String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var options = StoreOptions(compaction: .manual)
        options.fileLayer = layer
        let url = URL(fileURLWithPath: directory)
        let store = try Store(directory: url, schema: ContactsFixture.v2, options: options)
        #expect(
            X.problems(store.snapshot, comparedWith: states.v2) == [], "\(context())", sourceLocation: sourceLocation)
        #expect(store.snapshot.sequence == states.v2.sequence, "\(context())", sourceLocation: sourceLocation)
        #expect(store.schema.history.count == 1, "\(context())", sourceLocation: sourceLocation)
        #expect(store.snapshot.invariantViolations() == [], "\(context())", sourceLocation: sourceLocation)
        let person = ObjectID(entity: 1, serial: 1)
        try store.write { tx in try tx.set(person, "pinned", true) }
        try store.close()
        let reopened = try Store(directory: url, schema: ContactsFixture.v2, options: options)
        #expect(reopened.snapshot.sequence == states.v2.sequence + 1, "\(context())", sourceLocation: sourceLocation)
        #expect(try reopened.snapshot.value(person, "pinned") == true, "\(context())", sourceLocation: sourceLocation)
        #expect(
            try reopened.snapshot.fetch(DynamicQuery("Person", where: .equal("age", .int(25)))).count
                == (try states.v2.fetch(DynamicQuery("Person", where: .equal("age", .int(25))))).count,
            "the new index answers: \(context())", sourceLocation: sourceLocation)
        try reopened.close()
        let verification = try JournalReader(path: directory, layer: layer).verify()
        #expect(verification.problems == [], "\(context())", sourceLocation: sourceLocation)
        #expect(
            verification.objectCounts == ["Team": states.v2.count(entity: 0), "Person": states.v2.count(entity: 1)]
                && verification.lastSequence == states.v2.sequence + 1, "\(context())", sourceLocation: sourceLocation)
    }

    // MARK: F: every prefix

    @Test(
        "a crash after every prefix of a migrating open's file operations leaves the old or the new store, never a mix",
        arguments: [false, true])
    func everyPrefixOfAMigratingOpenLeavesTheOldOrTheNewStore(checkpoint: Bool) throws {
        let (states, seeded) = try States.make(people: ContactsFixture.people, checkpoint: checkpoint)
        let full = seeded.copy()
        let store = try Store(directory: Self.directoryURL, schema: ContactsFixture.v2, options: X.options(full))
        let operations = full.events
        try store.close()
        #expect(operations.contains { $0.operation == .rename && $0.path.contains("segment") })
        #expect(operations.contains { $0.operation == .rename && $0.path.contains("MANIFEST") })
        let policies = [
            SimulatedFileLayer.CrashPolicy(data: .dropUnsynced, keepUnsyncedEntries: false),
            SimulatedFileLayer.CrashPolicy(data: .keepUnsynced, keepUnsyncedEntries: true),
            SimulatedFileLayer.CrashPolicy(data: .dropUnsynced, keepUnsyncedEntries: true),
            SimulatedFileLayer.CrashPolicy(data: .keepUnsynced, keepUnsyncedEntries: false),
        ]
        var seen: [Found: Int] = [:]
        // Most operations change nothing a crash keeps (reads, and writes the policy drops): the disks they leave are
        // checked once each.
        var checked: [[String: [UInt8]]: Found] = [:]
        for prefix in 0...operations.count {
            for (p, policy) in policies.enumerated() {
                let disk = seeded.copy()
                disk.halt(afterOperations: prefix)
                let opened = try? Store(
                    directory: Self.directoryURL, schema: ContactsFixture.v2, options: X.options(disk))
                let context = "prefix \(prefix) of \(operations.count), policy \(p)"
                #expect(Array(disk.events.prefix(prefix)) == Array(operations.prefix(prefix)), "\(context)")
                #expect((opened != nil) == (prefix == operations.count), "\(context)")
                let after = disk.crash(policy)
                let image = try Dictionary(
                    uniqueKeysWithValues: after.list(X.directory).map { ($0, after.contents(X.path($0)) ?? []) })
                let found: Found
                if let known = checked[image] {
                    found = known
                } else {
                    found = try Self.expectOldOrNew(after, X.directory, states, context)
                    checked[image] = found
                    try Self.expectV2Opens(after, X.directory, states, context)
                }
                seen[found, default: 0] += 1
                // Once the open has returned, the migration is durable.
                if opened != nil { #expect(found == .new, "\(context)") }
            }
        }
        #expect(seen[.old, default: 0] > 0 && seen[.new, default: 0] > 0, "\(seen)")
        #expect(checked.count >= 4, "the crashes left too few distinct disks to mean much: \(checked.count)")
        print(
            "migration crash, every prefix (checkpoint: \(checkpoint)): \(operations.count) operations × "
                + "\(policies.count) policies: \(seen[.old, default: 0]) old, \(seen[.new, default: 0]) new; "
                + "\(checked.count) distinct disks checked")
    }

    // MARK: K: named points and SIGKILL

    @Test(
        "a child killed at each named point of a migration's commit leaves the old or the new store, and reopens",
        arguments: [("after-migration-segment", Found.old), ("after-migration-manifest", Found.new)])
    func selfKillAtAMigrationPointLeavesTheOldOrTheNewStore(point: String, expected: Found) throws {
        let (states, _) = try States.make(people: ContactsFixture.people)
        let temporary = TemporaryDirectory()
        let store = temporary.store
        let seeded = try CrashChild.run(["seed-contacts", "--dir", store.path])
        #expect(seeded.lines == ["seeded 1"])
        let child = try CrashChild.run(
            ["migrate-contacts", "--dir", store.path], environment: ["TRELLIS_CRASH_AT": point])
        #expect(child.killed && child.lines == ["opening"], "\(point) was never reached: \(child.lines)")
        let layer = StoreOptions().fileLayer
        #expect(try Self.expectOldOrNew(layer, store.path, states, point) == expected)

        // Another process reads the store as it is: the schema it holds and exactly its data.
        let dumped = try CrashChild.run(["dump", "--dir", store.path])
        #expect(dumped.exitStatus == 0, "\(point): \(dumped.lines.suffix(2))")
        #expect(dumped.lines == (try ContactsFixture.dump(expected == .old ? states.v1 : states.v2)), "\(point)")

        // The next migrating open, in another process, finishes the job (or finds it done).
        let again = try CrashChild.run(["migrate-contacts", "--dir", store.path])
        #expect(again.lines.prefix(3) == ["opening", "migrated 2", "closed 2"], "\(point)")
        try Self.expectV2Opens(layer, store.path, states, point)
    }

    /// Rounds: at least `killMinimum`, then more up to `killRounds` while the budget (seconds) lasts.
    static let killMinimum = X.long ? 50 : 4
    static let killRounds = X.long ? 200 : 8
    static let killBudget: Double = X.long ? 900 : 5
    /// 20,000 people make a migrating open of about 0.3 s in a debug build. A larger store does not widen the moment
    /// of the commit the kills aim at (the aim follows it); it only makes each round slower.
    static let killPeople = 20_000

    /// The files of a store directory and their bytes (the lock file and the durable mark for followers, which every
    /// writable open rewrites, are not store data).
    static func files(_ directory: URL) throws -> [String: Data] {
        var out: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path)
        where name != "LOCK" && name != DurableMark.fileName {
            out[name] = try Data(contentsOf: directory.appendingPathComponent(name))
        }
        return out
    }

    /// Which state a killed migration left, from the bytes (a recovery of the whole store per check would leave time
    /// for few rounds): old when the manifest is the seeded store's, byte for byte; new when it names one more segment
    /// and the v2 schema. Either way every file of the seeded store is there unchanged; files no manifest names (the
    /// new segment before the switch, temporary files) may be left. Anything else is a mix (nil).
    static func classify(_ store: URL, template: [String: Data], _ context: @autoclosure () -> String) throws -> Found?
    {
        let now = try files(store)
        for (name, bytes) in template where name != "MANIFEST" {
            #expect(now[name] == bytes, "\(name) changed: \(context())")
        }
        if now["MANIFEST"] == template["MANIFEST"] { return .old }
        let manifest = try JournalReader(directory: store).manifest()
        let new =
            manifest.fingerprint == ContactsFixture.v2.fingerprint && manifest.firstSegment == 1
            && manifest.lastSegment == 2 && now[JournalFormat.segmentName(2)] != nil
        #expect(new, "neither the old manifest nor the new one: \(manifest), \(now.keys.sorted()): \(context())")
        return new ? .new : nil
    }

    @Test("SIGKILL at random moments of a migrating open leaves the old or the new store")
    func sigkillDuringAMigrationLeavesTheOldOrTheNewStore() throws {
        let started = Date()
        // The two states, in memory: the seed, and the migration run on it without any file.
        let seed = Store(schema: ContactsFixture.v1)
        try ContactsFixture.seed(seed, people: Self.killPeople)
        let migration = try SchemaMigrator.run(seed.snapshot, plan: ResolvedMigrationPlan(schema: ContactsFixture.v2))
        let v2 = migration.graph
        #expect(v2.sequence == 2 && migration.record != nil)
        let temporary = TemporaryDirectory()
        let template = temporary.url.appendingPathComponent("template")
        let seeded = try CrashChild.run(["seed-contacts", "--dir", template.path, "--people", "\(Self.killPeople)"])
        #expect(seeded.lines == ["seeded 1"])
        let templateFiles = try Self.files(template)
        #expect(templateFiles.keys.sorted() == ["MANIFEST", JournalFormat.segmentName(1)])

        // Kills are aimed at the moment the migration is committed: the last few milliseconds of an open that is
        // mostly the recovery of the v1 store. The first aim is the end of the open in a whole run (the child measures
        // its open and its run, `took`; the rest of the time is starting a process). Then every kill that came before
        // anything was written moves the aim 3 % later, and every one that came after the switch 3 % earlier, so the
        // kills gather around the commit whatever the machine's load.
        func commitTime(_ child: CrashChild.Outcome, span: Double) throws -> Double {
            let took = child.lines.last.map { $0.split(separator: " ").dropFirst().compactMap { Double($0) } } ?? []
            try #require(child.lines.last?.hasPrefix("took ") == true && took.count == 2, "\(child.lines)")
            return max(0, span - took[1] / 1e6) + took[0] / 1e6
        }
        let calibration = temporary.url.appendingPathComponent("calibration")
        try FileManager.default.copyItem(at: template, to: calibration)
        let clock = Date()
        let whole = try CrashChild.run(["migrate-contacts", "--dir", calibration.path])
        let committed = try commitTime(whole, span: Date().timeIntervalSince(clock))
        var aim = committed
        #expect(whole.lines.prefix(3) == ["opening", "migrated 2", "closed 2"])
        #expect(try Self.classify(calibration, template: templateFiles, "calibration") == .new)
        var random = SeededRandom(seed: 11)
        var seen: [Found: Int] = [:]
        var (rounds, killed, leftovers) = (0, 0, 0)
        var checkedSeed = false
        let roundsStarted = Date()
        while rounds < Self.killMinimum
            || (rounds < Self.killRounds && Date().timeIntervalSince(roundsStarted) < Self.killBudget)
        {
            rounds += 1
            let store = temporary.url.appendingPathComponent("round-\(rounds)")
            try FileManager.default.copyItem(at: template, to: store)
            // The first round kills at half the aim, so that at least one kill lands on a loaded machine too.
            let delay = rounds == 1 ? aim / 2 : aim * (0.96 + 0.08 * Double(random.below(1_000)) / 1_000)
            let child = try CrashChild.run(["migrate-contacts", "--dir", store.path], killAfter: delay)
            let context = "round \(rounds), killed after \(Int(delay * 1_000)) ms: \(child.lines)"
            if child.killed {
                killed += 1
            } else {
                #expect(child.lines.prefix(3) == ["opening", "migrated 2", "closed 2"], "\(context)")
            }
            guard let found = try Self.classify(store, template: templateFiles, context) else { continue }
            seen[found, default: 0] += 1
            // The open returned: the migration was durable before it did.
            if child.lines.contains("migrated 2") { #expect(found == .new, "\(context)") }
            let before = try Self.files(store)
            if found == .old && before.count > templateFiles.count { leftovers += 1 }
            if before == templateFiles { aim *= 1.03 } else if found == .new { aim *= 0.97 }
            // A store left byte for byte as seeded opens as the first one did: it is checked once.
            if before == templateFiles {
                defer { checkedSeed = true }
                if checkedSeed {
                    try FileManager.default.removeItem(at: store)
                    continue
                }
            }
            // Opening with v2 gives exactly the v2 data, migrating an old store and only an old one.
            let opened = try Store(directory: store, schema: ContactsFixture.v2)
            #expect(X.problems(opened.snapshot, comparedWith: v2) == [], "\(context)")
            #expect(opened.snapshot.maxSerials == v2.maxSerials, "\(context)")
            #expect(opened.snapshot.sequence == 2 && opened.schema.history.count == 1, "\(context)")
            try opened.close()
            let after = try Self.files(store)
            if found == .new {
                #expect(after["MANIFEST"] == before["MANIFEST"], "a migrated store is migrated again: \(context)")
            }
            // What the kill left that no manifest names is gone.
            #expect(
                after.keys.sorted() == ["MANIFEST", JournalFormat.segmentName(1), JournalFormat.segmentName(2)],
                "\(context)")
            try FileManager.default.removeItem(at: store)
        }
        #expect(killed > 0, "no round was killed before the child finished (the open ends at \(committed) s)")
        print(
            "migration crash, SIGKILL: \(rounds) rounds of a migrating open of \(Self.killPeople) people (whole: "
                + "\(Int(committed * 1_000)) ms), kills aimed at the commit (last aim \(Int(aim * 1_000)) ms): "
                + "\(killed) killed, \(seen[.old, default: 0]) old "
                + "(\(leftovers) with files of the unfinished switch), \(seen[.new, default: 0]) new, "
                + "\(Int(Date().timeIntervalSince(started))) s")
    }
}

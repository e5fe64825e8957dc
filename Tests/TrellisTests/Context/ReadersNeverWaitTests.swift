import Foundation
import Synchronization
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Issue 5's "must show" 1, the seed-000 scenario: the view context fetches in a loop on the main actor while a
/// background context saves a 100,000-object import and then deletes a 111,111-folder hierarchy by cascade. The
/// reader keeps completing fetches during both saves, and every fetch sees one whole version: before or after each
/// save, never part of one.
@MainActor @Suite struct ReadersNeverWaitTests {
    /// When each background save started and ended.
    final class Timeline: Sendable {
        let marks = Mutex<[String: ContinuousClock.Instant]>([:])
        let finished = Atomic<Bool>(false)

        func mark(_ name: String) {
            let now = ContinuousClock.now
            marks.locked { $0[name] = now }
        }

        func window(_ name: String) -> ClosedRange<ContinuousClock.Instant>? {
            marks.locked { m in m["\(name) start"].flatMap { s in m["\(name) end"].map { s...$0 } } }
        }
    }

    /// One fetch round as the reader saw it.
    struct Observation {
        var end: ContinuousClock.Instant
        var chores: Int
        var folders: Int
        var dueSeven: Int
        var firstTitles: [String]
    }

    /// Five levels of folders and 100,000 chores; four levels and 10,000 chores under ThreadSanitizer, whose every
    /// access is slower (the same interleavings, a tenth of the objects).
    nonisolated static let levels = ThreadSanitizer.isActive ? 4 : 5
    nonisolated static let folders = (0...levels).reduce(0) { total, depth in total + Int(pow(10, Double(depth))) }
    nonisolated static let chores = ThreadSanitizer.isActive ? 10_000 : 100_000

    /// 111,111 folders (`folders`): a root, then five levels (`levels`) of ten children each, in one transaction.
    private static func makeHierarchy(_ store: Store) throws -> ObjectID {
        var tx = store.transaction()
        let root = try tx.insert("Folder", ["name": "root", "depth": 0])
        var level = [root]
        for depth in 1...Self.levels {
            var next: [ObjectID] = []
            next.reserveCapacity(level.count * 10)
            for parent in level {
                for n in 0..<10 {
                    let child = try tx.insert(
                        "Folder", ["name": .string("f\(depth).\(n)"), "depth": .int(Int64(depth))])
                    try tx.setTarget(child, "parent", parent)
                    next.append(child)
                }
            }
            level = next
        }
        try store.commit(tx)
        return root
    }

    @Test func theViewContextKeepsFetchingConsistentVersionsDuringAnImportAndACascadeDelete() async throws {
        let store = try makeStore()
        let root = try Self.makeHierarchy(store)
        #expect(try store.snapshot.count("Folder") == Self.folders)
        let view = store.viewContext
        let timeline = Timeline()
        let start = Date(timeIntervalSinceReferenceDate: 0)

        let writer = Task.detached {
            try await store.performBackgroundTask { context in
                let launch = Project(name: "Launch")
                context.insert(launch)
                for i in 0..<Self.chores {
                    context.insert(
                        Chore(
                            title: "step \(i)", due: start.addingTimeInterval(Double(i)),
                            estimate: i / (Self.chores / 10),
                            project: launch))
                }
                timeline.mark("import start")
                try context.save()
                timeline.mark("import end")
                context.delete(context.model(for: root, as: Folder.self)!)
                timeline.mark("delete start")
                try context.save()
                timeline.mark("delete end")
            }
            timeline.finished.store(true, ordering: .releasing)
        }

        var seen: [Observation] = []
        let allChores = FetchDescriptor<Chore>()
        let allFolders = FetchDescriptor<Folder>()
        let sevens = FetchDescriptor<Chore>(predicate: #Predicate { $0.estimate == 7 })
        let soonest = FetchDescriptor<Chore>(sortBy: [SortDescriptor(\.due)], fetchLimit: 5)
        while !timeline.finished.load(ordering: .acquiring) || seen.count < 3 {
            // One round reads one version: the view moves to a new snapshot only between rounds, at the yield.
            let chores = try view.fetchCount(allChores)
            let folders = try view.fetchCount(allFolders)
            let dueSeven = try view.fetchCount(sevens)
            let first = try view.fetch(soonest).map(\.title)
            seen.append(
                Observation(end: .now, chores: chores, folders: folders, dueSeven: dueSeven, firstTitles: first))
            // A screen refresh's pace, not a spin: the writer shares the machine's cores.
            try await Task.sleep(for: .milliseconds(1))
        }
        try await writer.value
        // Bring the view to the last commit, then read once more.
        view.refresh()
        #expect(view.snapshot.sequence == store.snapshot.sequence)
        seen.append(
            Observation(
                end: .now, chores: try view.fetchCount(allChores), folders: try view.fetchCount(allFolders),
                dueSeven: try view.fetchCount(sevens), firstTitles: try view.fetch(soonest).map(\.title)))

        let before = (0, Self.folders, 0, [String]())
        let imported = (Self.chores, Self.folders, Self.chores / 10, (0..<5).map { "step \($0)" })
        let deleted = (Self.chores, 0, Self.chores / 10, (0..<5).map { "step \($0)" })
        for o in seen {
            let state = (o.chores, o.folders, o.dueSeven, o.firstTitles)
            #expect(state == before || state == imported || state == deleted, "a fetch saw a partial version: \(state)")
        }
        #expect((seen.last!.chores, seen.last!.folders) == (Self.chores, 0))
        let importWindow = try #require(timeline.window("import"))
        let deleteWindow = try #require(timeline.window("delete"))
        let duringImport = seen.filter { importWindow.contains($0.end) }.count
        let duringDelete = seen.filter { deleteWindow.contains($0.end) }.count
        print(
            "reader: \(seen.count) rounds; \(duringImport) during the import save (\(importWindow.upperBound - importWindow.lowerBound)),"
                + " \(duringDelete) during the cascade delete save (\(deleteWindow.upperBound - deleteWindow.lowerBound))"
        )
        #expect(duringImport > 0, "no fetch completed while the import saved")
        #expect(duringDelete > 0, "no fetch completed while the cascade delete saved")
    }
}

import Foundation
import Synchronization
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Issue 18: a follower that was not scheduled during whole compactions (a suspended app extension) jumps to the new
/// checkpoint and publishes the new version as one refresh, whose change set the view context, live results and
/// observers read like any commit's. The follower here moves only when the test calls `catchUp()`.
@MainActor @Suite struct FollowJumpTests {
    typealias Book = FetchedResultsControllerTests.Book
    typealias Shelf = FetchedResultsControllerTests.Shelf
    typealias Mirror = FetchedResultsControllerTests.Mirror

    static func pausedFollower(_ directory: URL) throws -> Store {
        var options = StoreOptions.follower
        options.followNotifications = false
        options.followPollInterval = 3_600
        let store = try Store(directory: directory, models: [Shelf.self, Book.self], options: options)
        // The thread's first step reads what is durable whenever the thread first runs: wait for it, so that from
        // here on the follower reads only when the test calls `catchUp()`.
        #expect(eventually(within: 60) { (store.follower?.stepsTaken ?? 0) >= 1 })
        return store
    }

    /// The sort and section values of a book, which place its row.
    /// Makes the random commits `range` (compacting after each multiple of `compactEvery`) on a detached task: their
    /// writes and syncs stay off the main actor, which this suite shares with ReadersNeverWaitTests' reader (that
    /// test saw no fetch during a save while these loops held the main actor).
    nonisolated static func commit(
        _ writer: Store, _ random: SeededRandom, _ range: ClosedRange<Int>, compactEvery: Int = 0
    ) async throws -> SeededRandom {
        try await Task.detached {
            var random = random
            for n in range {
                try FetchedResultsControllerTests.randomCommit(writer, &random, n)
                if compactEvery > 0, n % compactEvery == 0 { try writer.compact() }
            }
            return random
        }.value
    }

    static func key(_ graph: Graph, _ id: ObjectID) -> [Value]? {
        guard let row = graph.row(id) else { return nil }
        let layout = graph.schema.layouts[Int(id.entity)]
        return ["area", "rank", "title"].map { name in row[layout.attributes.firstIndex { $0.name == name }!] }
    }

    @Test(
        "a follower that slept through several compactions jumps: observers get one refresh whose change set rebuilds the new version, live results a diff a mirror applies, the view context the new values",
        arguments: [1, 2, 3] as [UInt64])
    func aFollowerThatSleptThroughCompactionsJumps(seed: UInt64) async throws {
        let temporary = TemporaryDirectory()
        let directory = temporary.store
        let writer = try Store(
            directory: directory, models: [Shelf.self, Book.self],
            options: StoreOptions(compaction: .manual, segmentBytes: 4_096))
        var random = try await Self.commit(writer, SeededRandom(seed: seed), 1...80)

        let follower = try Self.pausedFollower(directory)
        // An open may show less than the writer's last commit (a mark caught mid-write falls back to the manifest):
        // everything is published before the test looks, and the view context is brought to it.
        #expect(try follower.catchUp() == writer.snapshot.sequence)
        let view = follower.viewContext
        view.refresh()
        let descriptor = FetchDescriptor<Book>(
            predicate: #Predicate { $0.pages < 500 },
            sortBy: [SortDescriptor(\.rank, order: .reverse), SortDescriptor(\.title)])
        let live = try FetchedResultsController(descriptor, sectionBy: \.area, context: view)
        var mirror = Mirror(live)
        var delivered: [ResultsChanges] = []
        let token = live.onChange { delivered.append($0) }
        var reported: [ContextChanges] = []
        let viewToken = view.onChange { reported.append($0) }
        let published = Mutex<[Commit]>([])
        let observation = follower.observe { commit in published.locked { $0.append(commit) } }
        defer {
            token.cancel()
            viewToken.cancel()
            observation.cancel()
        }
        let before = follower.snapshot
        #expect(before.sequence == writer.snapshot.sequence && view.snapshot.sequence == before.sequence)
        let books = try view.fetch(FetchDescriptor<Book>())
        #expect(!books.isEmpty)
        let shownBefore = Set(live.objectIDs)

        // Rotations every few commits and three compactions: the segment after the one the follower holds is gone.
        random = try await Self.commit(writer, random, 81...400, compactEvery: 100)
        let end = writer.snapshot
        #expect(try follower.catchUp() == end.sequence)
        #expect(follower.failure == nil && follower.isFollowing)
        #expect(follower.snapshot.differences(from: end).isEmpty)

        let commits = published.locked { $0 }
        #expect(
            commits.map(\.sequence) == [end.sequence],
            "before \(before.sequence); \(commits.map { "\($0.baseSequence)->\($0.sequence)\($0.isRefresh ? " refresh" : "")" })"
        )
        let refresh = try #require(commits.first)
        #expect(refresh.isRefresh && refresh.baseSequence == before.sequence && refresh.author == nil)
        // The refresh's change set takes the version shown before to the new one (serials spent on objects
        // inserted and deleted in between aside).
        let rebuilt = try before.applying(refresh.changes, sequence: end.sequence)
        #expect(rebuilt.differences(from: end).filter { !$0.hasPrefix("highest serials") }.isEmpty)
        #expect(rebuilt.invariantViolations().isEmpty)

        // Live results: one delivery that a table view's mirror applies to reach a fresh fetch.
        #expect(await eventuallyYielding { live.sequence == end.sequence && !delivered.isEmpty })
        for changes in delivered {
            let fits = mirror.apply(changes, from: live)
            #expect(fits)
        }
        #expect(mirror == (try FetchedResultsControllerTests.fetched(view, descriptor)))
        // A row kept in place is reported updated exactly when something else of it changed.
        let updated = Set(delivered.flatMap { $0.updatedRows.map { live.objectID(at: $0.to) } })
        let expected = Set(
            live.objectIDs.filter { id in
                shownBefore.contains(id) && Self.key(before, id) == Self.key(end, id)
                    && (before.row(id) != end.row(id)
                        || before.targets(id, RelationshipKey(entity: id.entity, index: 0))
                            != end.targets(id, RelationshipKey(entity: id.entity, index: 0)))
            })
        #expect(updated == expected)

        // The view context reports the same difference and shows the new values in the objects it had.
        #expect(await eventuallyYielding { view.snapshot.sequence == end.sequence && !reported.isEmpty })
        let report = reported.reduce(into: ContextChanges()) { $0.merge($1) }
        #expect(report.inserted == Set(refresh.changes.inserts.map(\.id)))
        #expect(report.deleted == Set(refresh.changes.deletes.map(\.id)))
        let rankKey = try follower.schema.attribute("Book", "rank")
        for book in books {
            let id = try #require(book.objectID)
            if let rank = end.value(id, rankKey) {
                #expect(.int(Int64(book.rank)) == rank)
            } else {
                #expect(book.isDeleted || report.deleted.contains(id))
            }
        }

        // And it goes on one commit at a time.
        random = try await Self.commit(writer, random, 401...420)
        #expect(try follower.catchUp() == writer.snapshot.sequence)
        let later = published.locked { $0 }.dropFirst()
        #expect(later.map(\.sequence) == Array((end.sequence + 1)...writer.snapshot.sequence))
        #expect(later.allSatisfy { !$0.isRefresh && $0.baseSequence == $0.sequence - 1 })
        #expect(follower.snapshot.differences(from: writer.snapshot).isEmpty)
        try writer.close()
        try follower.close()
    }

    @Test(
        "live results made while the view context lags re-read on the next commit and report rows changed in between as updated"
    )
    func liveResultsThatMissedACommitReportWhatChangedInBetween() throws {
        let store = try Store(models: [Shelf.self, Book.self])
        let view = store.viewContext
        let context = ModelContext(store)
        let (kept, moved) = (Book(), Book())
        kept.title = "kept"
        kept.rank = 1
        moved.title = "moved"
        moved.rank = 2
        context.insert(kept)
        context.insert(moved)
        try context.save()
        view.refresh()
        // Commit 2 changes what the rows do not sort by; the view context does not take it before the result is made
        // (the main actor does not run in between), so the result starts from commit 1 and never sees commit 2's
        // change set.
        kept.pages = 7
        try context.save()
        let live = try FetchedResultsController(
            FetchDescriptor<Book>(sortBy: [SortDescriptor(\.rank)]), context: view)
        #expect(live.sequence == 1)
        var delivered: [ResultsChanges] = []
        let token = live.onChange { delivered.append($0) }
        defer { token.cancel() }
        moved.rank = 0
        try context.save()
        live.refresh()
        #expect(live.sequence == 3)
        #expect(live.objectIDs == [moved.objectID!, kept.objectID!])
        let changes = try #require(delivered.last)
        #expect(changes.movedRows.map(\.to) == [ResultsIndexPath(section: 0, row: 0)])
        #expect(changes.updatedRows.map(\.to) == [ResultsIndexPath(section: 0, row: 1)])
        #expect(changes.updatedRows.first?.properties == ["pages"])
    }

    @Test("a refresh's change set is the difference of two versions: applied to the older, it gives the newer")
    nonisolated func aDifferenceRebuildsTheNewerVersion() throws {
        let store = try Store(models: [Shelf.self, Book.self])
        var random = SeededRandom(seed: 7)
        var versions = [store.snapshot]
        for n in 1...300 {
            try FetchedResultsControllerTests.randomCommit(store, &random, n)
            if n % 30 == 0 { versions.append(store.snapshot) }
        }
        for (old, new) in zip(versions, versions.dropFirst(2)) + [(versions[0], versions.last!)] {
            let changes = new.changes(from: old)
            #expect(!changes.isEmpty)
            let rebuilt = try old.applying(changes, sequence: new.sequence)
            #expect(rebuilt.differences(from: new).filter { !$0.hasPrefix("highest serials") }.isEmpty)
            #expect(new.changes(from: new).isEmpty)
        }
    }
}

import Foundation
import Observation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Issue 17: live results. A mirror that applies only the delivered changes stays equal to a fresh fetch, the
/// maintenance reads only the changed objects, and the result follows commits made anywhere.
@MainActor @Suite struct FetchedResultsControllerTests {
    final class Shelf: Model {
        @Attribute var name = ""
        @Relationship(deleteRule: .cascade, inverse: \Book.shelf) var books: [Book]
    }

    final class Book: Model {
        @Attribute(.indexed) var area = ""
        @Attribute var rank = 0
        @Attribute var title = ""
        @Attribute var pages = 0
        @Relationship var shelf: Shelf?
    }

    nonisolated static let areas = ["attic", "den", "hall", "kitchen", "study"]

    /// A table's rows as a table view holds them: section values and IDs, changed only by applying changes.
    @MainActor struct Mirror: Equatable {
        var sections: [Value] = []
        var rows: [[ObjectID]] = []

        init(_ live: FetchedResultsController<Book>) {
            sections = live.sections.map(\.value)
            rows = live.sections.map { section in section.range.map { live.objectID(at: $0) } }
        }

        init(sections: [Value], rows: [[ObjectID]]) {
            self.sections = sections
            self.rows = rows
        }

        /// Applies `changes` in the documented order, reading from `live` only what a table view's data source
        /// reads: the new rows' IDs and the new sections' values.
        /// Returns false (and records why) when a change does not fit the mirror, as a table view would refuse it.
        @discardableResult
        mutating func apply(_ changes: ResultsChanges, from live: FetchedResultsController<Book>) -> Bool {
            func fits(_ path: ResultsIndexPath, inserting: Bool) -> Bool {
                let ok =
                    rows.indices.contains(path.section)
                    && (inserting
                        ? path.row <= rows[path.section].count : rows[path.section].indices.contains(path.row))
                if !ok { Issue.record("\(path) does not fit sections of \(rows.map(\.count)): \(changes)") }
                return ok
            }
            let removed = (changes.deletedRows + changes.movedRows.map(\.from)).sorted(by: >)
            for path in removed {
                guard fits(path, inserting: false) else { return false }
                rows[path.section].remove(at: path.row)
            }
            for s in changes.deletedSections {
                guard rows.indices.contains(s), rows[s].isEmpty else {
                    Issue.record("section \(s) cannot be deleted from \(rows.map(\.count)): \(changes)")
                    return false
                }
                rows.remove(at: s)
                sections.remove(at: s)
            }
            let liveSections = live.sections
            for s in changes.insertedSections {
                guard s <= rows.count, liveSections.indices.contains(s) else {
                    Issue.record("section \(s) cannot be inserted into \(rows.count) sections: \(changes)")
                    return false
                }
                rows.insert([], at: s)
                sections.insert(liveSections[s].value, at: s)
            }
            for path in (changes.insertedRows + changes.movedRows.map(\.to)).sorted() {
                guard fits(path, inserting: true) else { return false }
                rows[path.section].insert(live.objectID(at: path), at: path.row)
            }
            return true
        }
    }

    /// What a fresh fetch gives, grouped by area the way the live result sections it.
    static func fetched(_ context: ModelContext, _ descriptor: FetchDescriptor<Book>) throws -> Mirror {
        var sorted = descriptor
        sorted.sortBy.insert(SortDescriptor(\.area), at: 0)
        var mirror = Mirror(sections: [], rows: [])
        for book in try context.fetch(sorted) {
            if mirror.sections.last != .string(book.area) {
                mirror.sections.append(.string(book.area))
                mirror.rows.append([])
            }
            mirror.rows[mirror.rows.count - 1].append(book.objectID!)
        }
        return mirror
    }

    /// One random commit: inserts, deletes, changes that move rows within and across sections, a title change
    /// (an update in place), a batch update, a cascade through a shelf.
    nonisolated static func randomCommit(_ store: Store, _ random: inout SeededRandom, _ n: Int) throws {
        let context = ModelContext(store)
        let books = try context.fetch(FetchDescriptor<Book>())
        func pick() -> Book? { books.isEmpty ? nil : books[Int(random.next() % UInt64(books.count))] }
        switch random.next() % 10 {
        case 0, 1, 2:
            let shelves = try context.fetch(FetchDescriptor<Shelf>())
            for _ in 0..<(1 + random.next() % 3) {
                let book = Book()
                book.area = areas[Int(random.next() % UInt64(areas.count))]
                book.rank = Int(random.next() % 50)
                book.title = "b\(n)"
                context.insert(book)
                if !shelves.isEmpty { book.shelf = shelves[Int(random.next() % UInt64(shelves.count))] }
            }
            if random.next() % 4 == 0 { context.insert(Shelf()) }
        case 3: pick().map { context.delete($0) }
        case 4: pick()?.rank = Int(random.next() % 50)
        case 5: pick()?.area = areas[Int(random.next() % UInt64(areas.count))]
        case 6: pick()?.pages = Int(random.next() % 400)
        case 7:
            let area = areas[Int(random.next() % UInt64(areas.count))]
            let rank = Int(random.next() % 50)
            try store.batchUpdate(Book.self, where: #Predicate { $0.area == area }, set: [.init(\.rank, rank)])
            return
        case 8:
            if let shelf = try context.fetch(FetchDescriptor<Shelf>()).first { context.delete(shelf) }
        default:
            // Several changes in one commit: a move, a delete and an insert.
            pick()?.rank = Int(random.next() % 50)
            if let b = pick(), !b.isDeleted { context.delete(b) }
            let book = Book()
            book.area = areas[Int(random.next() % UInt64(areas.count))]
            context.insert(book)
        }
        try context.save()
    }

    @Test(
        "a mirror that applies only the delivered changes equals a fresh fetch after each of 2,000 random commits",
        arguments: [1, 2, 3] as [UInt64])
    func aMirrorOfTheChangesEqualsAFreshFetch(seed: UInt64) async throws {
        let store = try Store(models: [Shelf.self, Book.self])
        let view = store.viewContext
        let predicate = #Predicate<Book> { $0.pages < 500 }
        let descriptor = FetchDescriptor<Book>(
            predicate: predicate, sortBy: [SortDescriptor(\.rank, order: .reverse), SortDescriptor(\.title)])
        let live = try FetchedResultsController(descriptor, sectionBy: \.area, context: view)
        var mirror = Mirror(live)
        #expect(mirror.rows.isEmpty)
        var delivered: [ResultsChanges] = []
        let token = live.onChange { delivered.append($0) }
        var random = SeededRandom(seed: seed)
        var (moves, sectionChanges, updates) = (0, 0, 0)
        for n in 1...2_000 {
            // Other main-actor tests (the view context's readers) run between commits: this loop holds the main
            // actor for one commit at a time, not for the whole run.
            await Task.yield()
            try Self.randomCommit(store, &random, n)
            if n % 97 == 0 {
                // Books that leave the result by an attribute the predicate reads.
                try store.batchUpdate(Book.self, where: #Predicate { $0.rank > 40 }, set: [.init(\.pages, 900)])
            }
            live.refresh()
            view.refresh()
            for changes in delivered {
                mirror.apply(changes, from: live)
                moves += changes.movedRows.count
                sectionChanges += changes.insertedSections.count + changes.deletedSections.count
                updates += changes.updatedRows.count
            }
            delivered.removeAll()
            let expected = try Self.fetched(view, descriptor)
            #expect(mirror == expected, "seed \(seed), commit \(n)")
            #expect(live.sections.map(\.value) == expected.sections)
            #expect(live.count == expected.rows.reduce(0) { $0 + $1.count })
            if mirror != expected { break }
        }
        token.cancel()
        print(
            "live results, seed \(seed): 2,000 commits, \(moves) moves, \(sectionChanges) section changes, \(updates) updates"
        )
        // The random commits exercised every kind of change.
        #expect(
            moves > 50 && sectionChanges > 5 && updates > 50,
            "moves \(moves), sections \(sectionChanges), updates \(updates)")
    }

    @Test("a one-object change on a 100,000-object sectioned result reads only that object")
    func aOneObjectChangeReadsOnlyThatObject() async throws {
        // The 100,000 books are written off the main actor, which other tests' readers share.
        let store = try await Task.detached {
            let store = try Store(models: [Shelf.self, Book.self])
            var tx = store.transaction()
            for i in 0..<100_000 {
                _ = try tx.insert(
                    "Book",
                    ["area": .string(Self.areas[i % 5]), "rank": .int(Int64(i % 1_000)), "title": .string("b\(i)")])
            }
            try store.commit(tx)
            return store
        }.value
        let view = store.viewContext
        view.refresh()
        let live = try FetchedResultsController(
            FetchDescriptor<Book>(sortBy: [SortDescriptor(\.rank)]), sectionBy: \.area, context: view)
        #expect(live.count == 100_000 && live.sections.count == 5)
        let before = live.maintenanceReads
        var changes: [ResultsChanges] = []
        let token = live.onChange { changes.append($0) }
        let id = live.objectID(at: 12_345)
        let old = try #require(live.indexPath(of: id))
        try store.write { tx in try tx.set(id, "rank", .int(5_000)) }
        live.refresh()
        token.cancel()
        // The changed object keyed in the old version and the new one, and again for the change report: no other.
        #expect(live.maintenanceReads - before <= 4, "\(live.maintenanceReads - before) rows read")
        let new = try #require(live.indexPath(of: id))
        #expect(new.section == old.section && new.row == live.sections[new.section].count - 1)
        #expect(changes.count == 1)
        #expect(changes.first?.movedRows == [.init(from: old, to: new, properties: ["rank"])])
    }

    @Test("the result follows a background save on the main actor by itself, as a callback and a stream")
    func theResultFollowsABackgroundSaveByItself() async throws {
        let store = try Store(models: [Shelf.self, Book.self])
        let live = try FetchedResultsController(
            FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)]), context: store.viewContext)
        var called: [ResultsChanges] = []
        let token = live.onChange { called.append($0) }
        let stream = live.changes()
        try await store.performBackgroundTask { context in
            let book = Book()
            book.title = "from the background"
            context.insert(book)
            try context.save()
        }
        var iterator = stream.makeAsyncIterator()
        let streamed = await iterator.next()
        #expect(streamed?.insertedRows == [ResultsIndexPath(section: 0, row: 0)])
        #expect(called.count == 1 && called.first == streamed)
        #expect(live.count == 1 && live[0].title == "from the background")
        #expect(live.sections.count == 1 && live.sections[0].range == 0..<1)
        token.cancel()
    }

    @Test("reading the result inside withObservationTracking registers it: a commit that changes it notifies")
    func observersOfTheResultAreNotified() throws {
        let store = try Store(models: [Shelf.self, Book.self])
        let live = try FetchedResultsController(FetchDescriptor<Book>(), context: store.viewContext)
        let fired = Flag()
        withObservationTracking {
            _ = live.count
        } onChange: {
            fired.set()
        }
        try store.write { tx in _ = try tx.insert("Book", ["title": "one"]) }
        #expect(!fired.value, "notified before the result took the commit")
        live.refresh()
        #expect(fired.value && live.count == 1)
    }

    final class Flag: @unchecked Sendable {
        private(set) var value = false
        func set() { value = true }
    }

    @Test("what a live result cannot follow is refused with a message, before anything is read")
    func whatItCannotFollowIsRefused() throws {
        let store = try Store(models: [Shelf.self, Book.self])
        let view = store.viewContext
        let throughShelf = #Predicate<Book> { $0.shelf?.name == "top" }
        #expect(throws: TrellisError.self) {
            _ = try FetchedResultsController(FetchDescriptor<Book>(predicate: throughShelf), context: view)
        }
        var limited = FetchDescriptor<Book>()
        limited.fetchLimit = 10
        #expect(throws: TrellisError.self) { _ = try FetchedResultsController(limited, context: view) }
        #expect(throws: TrellisError.self) {
            _ = try FetchedResultsController(FetchDescriptor<Book>(), context: ModelContext(store))
        }
        do {
            _ = try FetchedResultsController(FetchDescriptor<Book>(predicate: throughShelf), context: view)
        } catch let error as TrellisError {
            #expect(error.code == .invalidArgument && error.message.contains("relationships"))
        }
    }

    @Test("commits made between the first read and the subscription are caught up with in one change")
    func aMissedCommitIsCaughtUp() throws {
        let store = try Store(models: [Shelf.self, Book.self])
        let view = store.viewContext
        try store.write { tx in _ = try tx.insert("Book", ["title": "a"]) }
        // The view context has not moved yet: the result starts from its snapshot (no books), then sees commit 2
        // after a gap.
        let live = try FetchedResultsController(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)]), context: view)
        #expect(live.count == 0)
        var mirror = Mirror(live)
        var changes: [ResultsChanges] = []
        let token = live.onChange { changes.append($0) }
        try store.write { tx in _ = try tx.insert("Book", ["title": "b"]) }
        live.refresh()
        token.cancel()
        #expect(live.count == 2 && changes.count == 1)
        #expect(mirror.rows == [[]] && mirror.sections == [.null], "an unsectioned result has one section")
        for c in changes { mirror.apply(c, from: live) }
        #expect(mirror.rows == [live.objectIDs])
    }
}

import Foundation
import Testing
import Trellis

/// Issue 16, item 6: `refresh()` moved a context to the newest snapshot but told nobody what changed, so synchronous
/// code (which never lets the main actor run, as on Linux without a run loop) got no change report from the view
/// context at all. Now `refresh()` delivers the report a followed commit delivers, once.
@MainActor @Suite struct RefreshReportTests {
    @Test func refreshingTheViewContextInSynchronousCodeDeliversTheReportAtOnceAndOnlyOnce() async throws {
        let store = try makeStore()
        let view = store.viewContext
        var reports: [ContextChanges] = []
        let token = view.onChange { reports.append($0) }
        var stream = view.changes().makeAsyncIterator()

        // Synchronous from here to the refresh: the main actor never runs the store's scheduled delivery.
        let first = try insertElsewhere(store, "first")
        #expect(view.model(for: first, as: Chore.self) == nil, "the view context moved before the refresh")
        #expect(reports.isEmpty)
        view.refresh()
        #expect(reports.count == 1)
        #expect(reports.first?.inserted == [first])
        #expect(view.model(for: first, as: Chore.self)?.title == "first")

        // The scheduled delivery finds nothing left: the next report names only the next commit.
        let second = try insertElsewhere(store, "second")
        var streamed: [Set<ObjectID>] = []
        while !streamed.contains(where: { $0.contains(second) }) {
            streamed.append(try #require(await stream.next()).inserted)
        }
        #expect(streamed == [[first], [second]])
        #expect(reports.map(\.inserted) == [[first], [second]])
        token.cancel()
    }

    @Test func aBackgroundRootContextReportsWhatARefreshBringsButNotItsOwnSaves() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        let before = try insertElsewhere(store, "before subscribing")
        var reports: [ContextChanges] = []
        let token = context.onChange { reports.append($0) }

        let chore = Chore(title: "mine")
        context.insert(chore)
        try context.save()
        let elsewhere = try insertElsewhere(store, "elsewhere")
        try store.write { tx in try tx.set(before, "title", "renamed") }
        #expect(reports.isEmpty, "a root context reports only when it moves")
        #expect(context.model(for: elsewhere, as: Chore.self) == nil)

        context.refresh()
        #expect(reports.count == 1)
        let report = try #require(reports.first)
        #expect(report.inserted == [elsewhere], "its own insert and the commit before it subscribed are not reported")
        #expect(report.updated == [before: ["title"]])
        #expect(report.deleted.isEmpty)
        #expect(context.model(for: elsewhere, as: Chore.self)?.title == "elsewhere")

        context.refresh()
        #expect(reports.count == 1, "a refresh that brings nothing reports nothing")
        token.cancel()
    }

    @Test func theRefreshReportEqualsTheReportOfTheViewContextFollowingTheSameCommits() async throws {
        let store = try makeStore()
        let view = store.viewContext
        var followed = view.changes().makeAsyncIterator()
        let context = ModelContext(store)
        var refreshed: [ContextChanges] = []
        let token = context.onChange { refreshed.append($0) }

        let kept = try insertElsewhere(store, "kept")
        let gone = try insertElsewhere(store, "gone")
        try store.write { tx in
            try tx.set(kept, "estimate", 3)
            try tx.delete(gone)
        }
        // Filed before the main actor ran: one delivery covers the three commits.
        let viewReport = try #require(await followed.next())
        #expect(viewReport.sequences.count == 3)
        context.refresh()
        let report = try #require(refreshed.first)
        #expect(report.inserted == viewReport.inserted && report.inserted == [kept])
        #expect(report.updated == viewReport.updated && report.updated.isEmpty)
        #expect(report.deleted == viewReport.deleted && report.deleted.isEmpty)
        #expect(report.sequences == viewReport.sequences)
        token.cancel()
    }

    private func insertElsewhere(_ store: Store, _ title: String) throws -> ObjectID {
        try store.write { tx in try tx.insert("Chore", ["title": .string(title)]) }
    }
}

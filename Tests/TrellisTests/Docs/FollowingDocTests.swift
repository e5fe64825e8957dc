import Foundation
import Testing
import Trellis

/// The examples of the DocC article FollowingAStore, verbatim: a follower opened with `.follower` sees a writer's
/// commits through its observers and view context, `catchUp()` publishes what is durable at once, and the failure
/// check reads as the article says.
@MainActor @Suite struct FollowingDocTests {
    final class Chore: Model {
        @Attribute var title = ""
        @Attribute var done = false
    }

    // swift-format-ignore
    @Test func aFollowerSeesTheWritersCommits() async throws {
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("follow-doc-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: temporary) }
        let url = temporary.appendingPathComponent("store")
        let writer = try Store(directory: url, models: [Chore.self])

        let store = try Store(directory: url, models: [Chore.self], options: .follower)
        let view = store.viewContext                          // moves with every durable commit of the writer
        let token = store.observe { commit in                 // on the follower's thread, in commit order
            print("commit \(commit.sequence): \(commit.changes.inserts.count) inserted")
        }
        defer { token.cancel() }

        let writing = ModelContext(writer)
        for title in ["sweep", "dust"] {
            let chore = Chore()
            chore.title = title
            writing.insert(chore)
        }
        try writing.save()

        let sequence = try store.catchUp()                    // everything durable now is published when it returns
        let reader = ModelContext(store)                      // a context made now reads that version
        let open = try reader.fetch(FetchDescriptor<Chore>(predicate: #Predicate { !$0.done }))
        print("\(open.count) open chores as of commit \(sequence)")
        #expect(sequence == 1 && open.map(\.title).sorted() == ["dust", "sweep"])
        view.refresh()
        #expect(view.snapshot.sequence == 1)

        #expect(store.isFollowing && store.failure == nil)
        try store.close()
        if !store.isFollowing, let failure = store.failure {
            print("stopped following: \(failure.message)")    // open the store again to go on
        }
        #expect(!store.isFollowing)
        try writer.close()
    }

    @Test func theTimerOptionIsTheDocumentedOne() {
        var options = StoreOptions.follower
        options.followPollInterval = 0.2  // without inotify: look five times a second
        #expect(options.follow && options.readOnly && options.followPollInterval == 0.2)
    }
}

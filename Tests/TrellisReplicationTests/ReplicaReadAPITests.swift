import Foundation
import Synchronization
import Testing
import Trellis
import TrellisReplication

/// A replica serves the read APIs a follower serves: observers see each applied commit in order with its change set
/// and the writer's author, a context made afterwards fetches the new version, and the history lists the writer's
/// commits with their authors and old and new values.
@Suite(.serialized) struct ReplicaReadAPITests {
    typealias Project = ReplicaTests.Project
    typealias Task = ReplicaTests.Task

    @Test func aReplicasObserversContextsAndHistoryFollowTheWriter() throws {
        let server = try NATSServer()
        defer { server.tearDown() }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-replica-reads-\(UUID())")
        defer { try? FileManager.default.removeItem(at: base) }
        let store = try Store(directory: base.appendingPathComponent("writer"), models: [Project.self, Task.self])
        let publisher = try ReplicationPublisher(store: store, url: server.url, name: "reads")
        publisher.start()
        let context = ModelContext(store)
        context.transactionAuthor = "importer"
        let project = Project()
        project.name = "alpha"
        context.insert(project)
        try context.save()  // record 1
        #expect(publisher.waitUntilPublished(1, timeout: .seconds(60)))

        let replica = try Replica(url: server.url, name: "reads", directory: base.appendingPathComponent("replica"))
        replica.start()
        #expect(replica.waitUntilApplied(1, timeout: .seconds(60)))
        _ = try replica.store.catchUp()
        let token = try replica.store.currentHistoryToken()
        #expect(token.sequence == 1)
        // (sequence, inserted, updated, author) of each commit the replica's store publishes from now on.
        let seen = Mutex<[(UInt64, Int, Int, String?)]>([])
        let observation = replica.store.observe { commit in
            seen.locked {
                $0.append((commit.sequence, commit.changes.inserts.count, commit.changes.updates.count, commit.author))
            }
        }
        for i in 0..<5 {
            let task = Task()
            task.title = "task \(i)"
            task.project = project
            context.insert(task)
            try context.save()  // records 2…6
        }
        project.name = "beta"
        try context.save()  // record 7

        #expect(replica.waitUntilApplied(7, timeout: .seconds(60)))
        #expect(try replica.store.catchUp() == 7)
        let deadline = Date().addingTimeInterval(30)
        while seen.locked({ $0.count }) < 6 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        let commits = seen.locked { $0 }
        #expect(commits.map(\.0) == [2, 3, 4, 5, 6, 7])
        #expect(commits.prefix(5).allSatisfy { $0.1 == 1 }, "each of records 2…6 inserts one task")
        #expect(commits.last?.1 == 0 && commits.last?.2 == 1, "record 7 updates the project only")
        #expect(commits.allSatisfy { $0.3 == "importer" })
        observation.cancel()

        // A context made now reads the replica's newest version.
        let view = ModelContext(replica.store)
        let projects = try view.fetch(FetchDescriptor<Project>())
        #expect(projects.map(\.name) == ["beta"])
        #expect(projects.first?.tasks.map(\.title).sorted() == (0..<5).map { "task \($0)" })

        // The history after the token: the writer's six commits, their author, the rename's old and new values.
        let history = try replica.store.history(since: token)
        #expect(history.map(\.sequence) == [2, 3, 4, 5, 6, 7])
        #expect(history.allSatisfy { $0.author == "importer" })
        let rename = history.last?.changes(of: Project.self).first
        #expect(rename?.oldValue(\Project.name) == "alpha" && rename?.newValue(\Project.name) == "beta")

        #expect(replica.stop())
        #expect(publisher.stop())
        try store.close()
    }
}

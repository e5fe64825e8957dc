import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

// The README's typed-model example, kept compiling and true.

final class ReadmeProject: Model {
    @Attribute(.unique) var name = ""
    @Relationship(deleteRule: .cascade, inverse: \ReadmeTask.project) var tasks: [ReadmeTask]

    convenience init(name: String) {
        self.init()
        self.name = name
    }
}

final class ReadmeTask: Model {
    @Attribute var title = ""
    @Attribute(.indexed) var due = Date.distantFuture
    @Attribute var done = false
    @Relationship var project: ReadmeProject?

    convenience init(title: String, due: Date, project: ReadmeProject) {
        self.init()
        self.title = title
        self.due = due
        self.project = project
    }
}

@MainActor @Suite struct ReadmeModelExampleTests {
    @Test func theReadmeModelExampleSavesInTheBackgroundAndTheViewContextFollows() async throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: url) }
        let store = try Store(directory: url, models: [ReadmeProject.self, ReadmeTask.self])
        let view = store.viewContext
        var changes = view.changes().makeAsyncIterator()

        let start = Date(timeIntervalSince1970: 1_800_000_000)
        try await store.performBackgroundTask { context in
            let launch = ReadmeProject(name: "Launch")
            context.insert(launch)
            for i in 0..<1_000 {
                context.insert(
                    ReadmeTask(title: "step \(i)", due: start.addingTimeInterval(Double(i) * 3600), project: launch))
            }
            try context.save()
        }
        _ = await changes.next()

        let deadline = start.addingTimeInterval(100 * 3600)
        let descriptor = FetchDescriptor<ReadmeTask>(
            predicate: #Predicate { !$0.done && $0.due < deadline }, sortBy: [SortDescriptor(\.due)], fetchLimit: 50)
        let next = try view.fetch(descriptor)
        #expect(next.count == 50)
        #expect(next.first?.title == "step 0")
        #expect(next.last?.title == "step 49")
        #expect(try view.explain(descriptor).description.contains("due"))
        try store.close()

        let reopened = try Store(directory: url, models: [ReadmeProject.self, ReadmeTask.self])
        #expect(try reopened.snapshot.count("ReadmeTask") == 1_000)
        try reopened.close()
    }
}

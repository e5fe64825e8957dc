import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// The typed spelling of renames: `@Attribute(originalName:)`, `@Relationship(originalName:)` and a class's
/// `originalEntityName`, as SwiftData and Core Data users declare them.
enum JournalAppV1 {
    final class Entry: Model {
        @Attribute var title = ""
        @Attribute var words = 0
        @Relationship var shelf: Shelf?
    }

    final class Shelf: Model {
        @Attribute var label = ""
        @Relationship(inverse: \Entry.shelf) var entries: [Entry]
    }
}

enum JournalAppV2 {
    final class Memo: Model {
        override class var originalEntityName: String? { "Entry" }
        @Attribute(originalName: "title") var headline = ""
        @Attribute(.indexed) var words = 0
        @Attribute var pinned = false
        @Relationship(originalName: "shelf") var box: Shelf?
    }

    final class Shelf: Model {
        @Attribute var label = ""
        @Relationship(inverse: \Memo.box, originalName: "entries") var memos: [Memo]
    }
}

@Suite struct ModelRenameMigrationTests {
    @Test func renamedClassesAndPropertiesKeepTheirObjectsValuesLinksAndIDs() throws {
        let directory = MigrationFixtures.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var ids: [ObjectID] = []
        do {
            let store = try Store(directory: directory, models: [JournalAppV1.Entry.self, JournalAppV1.Shelf.self])
            let context = ModelContext(store)
            let shelf = JournalAppV1.Shelf()
            shelf.label = "drafts"
            context.insert(shelf)
            var entries: [JournalAppV1.Entry] = []
            for i in 0..<20 {
                let entry = JournalAppV1.Entry()
                entry.title = "entry \(i)"
                entry.words = i * 10
                entry.shelf = shelf
                context.insert(entry)
                entries.append(entry)
            }
            try context.save()
            ids = entries.compactMap(\.objectID)
            try store.close()
        }
        #expect(ids.count == 20)
        let store = try Store(directory: directory, models: [JournalAppV2.Memo.self, JournalAppV2.Shelf.self])
        let steps = store.schema.history.last?.steps ?? []
        #expect(steps.contains { $0.contains("rename entity from 'Entry'") })
        #expect(steps.contains { $0.contains("rename attribute 'title' to 'headline'") })
        #expect(steps.contains { $0.contains("rename relationship 'shelf' to 'box'") })
        #expect(steps.contains { $0.contains("rename relationship 'entries' to 'memos'") })
        let context = ModelContext(store)
        let memos = try context.fetch(FetchDescriptor<JournalAppV2.Memo>(sortBy: [SortDescriptor(\.words)]))
        #expect(memos.map(\.headline) == (0..<20).map { "entry \($0)" })
        #expect(memos.map(\.objectID) == ids, "IDs survive the renames")
        #expect(memos.allSatisfy { !$0.pinned && $0.box?.label == "drafts" })
        #expect(try context.fetch(FetchDescriptor<JournalAppV2.Shelf>()).first?.memos.count == 20)
        let plan = try context.explain(FetchDescriptor<JournalAppV2.Memo>(predicate: #Predicate { $0.words == 50 }))
        #expect(plan.index == ["words"])
        try store.close()
    }
}

/// A relationship declared on one side only gets a hidden inverse named after its entity and property
/// (`Entry.shelf`); renaming either renames the hidden inverse, which is matched through its pair.
enum HiddenInverseV1 {
    final class Entry: Model {
        @Attribute var title = ""
        @Relationship var shelf: Shelf?
    }

    final class Shelf: Model {
        @Attribute var label = ""
    }
}

enum HiddenInverseV2 {
    final class Memo: Model {
        override class var originalEntityName: String? { "Entry" }
        @Attribute var title = ""
        @Relationship(originalName: "shelf") var box: Shelf?
    }

    final class Shelf: Model {
        @Attribute var label = ""
    }
}

@Suite struct HiddenInverseMigrationTests {
    @Test func aHiddenInverseFollowsTheRenameOfItsPair() throws {
        let directory = MigrationFixtures.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let store = try Store(
                directory: directory, models: [HiddenInverseV1.Entry.self, HiddenInverseV1.Shelf.self])
            #expect(store.schema.entities[1].relationships.map(\.name) == ["Entry.shelf"])
            let context = ModelContext(store)
            let shelf = HiddenInverseV1.Shelf()
            context.insert(shelf)
            for i in 0..<3 {
                let entry = HiddenInverseV1.Entry()
                entry.title = "e\(i)"
                entry.shelf = shelf
                context.insert(entry)
            }
            try context.save()
            try store.close()
        }
        let store = try Store(directory: directory, models: [HiddenInverseV2.Memo.self, HiddenInverseV2.Shelf.self])
        #expect(store.schema.entities[1].relationships.map(\.name) == ["Memo.box"])
        #expect(
            store.schema.history.last?.steps.contains { $0.contains("rename relationship 'Entry.shelf' to 'Memo.box'") }
                == true)
        let shelf = try store.snapshot.fetch(DynamicQuery("Shelf"))[0]
        #expect(try store.snapshot.targets(shelf, "Memo.box").count == 3)
        try store.close()
    }
}

import Foundation
import Testing
import Trellis

/// Issue 16, item 5: SwiftData users write designated initializers with parameters. Without a macro, a model needs
/// one more line for them: `required init() { super.init() }`, since the context makes the objects it fetches with
/// `init()` (leaving it out does not compile: "'required' initializer 'init()' must be provided by subclass of
/// 'Model'"). With it, assignments work before or after `super.init()`, and the schema's defaults stay the property
/// initializers'.
@Suite struct DesignatedInitializerTests {
    final class Memo: Model {
        enum Kind: String { case note, todo }

        @Attribute var text = ""
        @Attribute var kind = Kind.note
        @Attribute var pinned = false
        @Relationship var folder: Folder?

        init(text: String, kind: Kind, folder: Folder? = nil) {
            super.init()
            self.text = text
            self.kind = kind
            self.folder = folder
        }

        required init() { super.init() }
    }

    /// Assigning before `super.init()` initializes the property's storage: it works too.
    final class Tag: Model {
        @Attribute(.unique) var label = ""
        @Attribute var weight = 1

        init(label: String, weight: Int) {
            self.label = label
            self.weight = weight
            super.init()
        }

        required init() { super.init() }
    }

    @Test func designatedInitializersWithParametersWorkNextToRequiredInit() throws {
        let store = try Store(models: [Memo.self, Tag.self, Folder.self])
        let memo = store.schema.entities[0]
        #expect(
            memo.attributes.map(\.defaultValue) == ["", "note", false], "defaults come from init(), not init(text:)")
        let context = ModelContext(store)
        let inbox = Folder(name: "Inbox")
        let memoObject = Memo(text: "buy milk", kind: .todo, folder: inbox)
        let tag = Tag(label: "home", weight: 3)
        #expect(memoObject.text == "buy milk" && memoObject.kind == .todo && memoObject.folder === inbox)
        #expect(tag.label == "home" && tag.weight == 3)
        context.insert(memoObject)
        context.insert(tag)
        try context.save()

        let other = ModelContext(store)
        let memos = try other.fetch(FetchDescriptor<Memo>())
        #expect(memos.map(\.text) == ["buy milk"] && memos.map(\.kind) == [.todo])
        #expect(memos.first?.folder?.name == "Inbox")
        let tags = try other.fetch(FetchDescriptor<Tag>())
        #expect(tags.map(\.label) == ["home"] && tags.map(\.weight) == [3])

        // The unique constraint declared on the property holds for objects made by the designated initializer.
        context.insert(Tag(label: "home", weight: 1))
        let error = try #require(throws: TrellisError.self) { try context.save() }
        #expect(error.uniqueViolation?.attributes == ["label"])
    }
}

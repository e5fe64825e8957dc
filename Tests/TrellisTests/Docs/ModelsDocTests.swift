import Foundation
import Testing
import Trellis

/// The `Chore` of "Models and Contexts" (Trellis.docc/ModelsAndContexts.md), verbatim, with a `Project` for its
/// relationship.
enum ModelsExample {
    final class Project: Model {
        @Attribute(.unique) var name = ""
        @Relationship(inverse: \Chore.project) var chores: [Chore]
    }

    // swift-format-ignore
    final class Chore: Model {
        @Attribute var title = ""                              // required, default ""
        @Attribute(.indexed) var due = Date.distantFuture      // indexed for predicates and sorting
        @Attribute(.unique) var code = UUID()                   // unique constraint
        @Attribute var note: String?                            // optional: may be nil
        @Attribute var estimate = 1
        @Relationship var project: Project?
    }
}

/// The article's compound index, in a `Chore` of its own.
enum CompoundIndexExample {
    final class Chore: Model {
        @Attribute var title = ""
        @Attribute var done = false
        @Attribute var due = Date.distantFuture

        override class var indexes: [ModelIndex] { [.index(\Chore.done, \Chore.due)] }
    }
}

extension ModelsExample {
    /// The article's claims about its `Chore`, checked on a store of it (see `ReadmeTests` for how the examples run).
    @Suite struct ModelsDocTests {
        @Test func eachAttributeDeclarationGivesTheSchemaAndTheObjectsWhatItsCommentSays() throws {
            let store = try Store(models: [Project.self, Chore.self])
            let entity = try #require(store.schema.entities.first { $0.name == "Chore" })
            let attributes = Dictionary(uniqueKeysWithValues: entity.attributes.map { ($0.name, $0) })
            #expect(attributes["title"]?.isOptional == false && attributes["title"]?.defaultValue == "")
            #expect(attributes["note"]?.isOptional == true)
            #expect(entity.indexes.contains(IndexDescription(["due"])))
            #expect(entity.indexes.contains(IndexDescription(["code"], unique: true)))

            let context = ModelContext(store)
            let first = Chore()
            let second = Chore()
            context.insert(first)
            context.insert(second)
            try context.save()
            #expect(first.code != second.code, "UUID() is evaluated per object")
            #expect(first.note == nil && first.estimate == 1)
            let end = Date.distantFuture
            let plan = try context.explain(FetchDescriptor<Chore>(predicate: #Predicate { $0.due < end }))
            #expect(plan.index == ["due"])

            second.code = first.code
            let error = #expect(throws: TrellisError.self) { try context.save() }
            #expect(error?.code == .uniqueViolation)
        }

        @Test func aCompoundIndexServesAnEqualityAndARangeTogether() throws {
            typealias Chore = CompoundIndexExample.Chore
            let store = try Store(models: [Chore.self])
            let context = ModelContext(store)
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let plan = try context.explain(FetchDescriptor<Chore>(predicate: #Predicate { !$0.done && $0.due < now }))
            #expect(plan.index == ["done", "due"])
            #expect(plan.access == .indexRange)
        }

        /// "Queries and Indexes": the compound index's entries read alone give the open chores' due dates in order.
        // swift-format-ignore
        @Test func theCompoundIndexAloneListsTheOpenChoresDueDatesInOrder() throws {
            typealias Chore = CompoundIndexExample.Chore
            let store = try Store(models: [Chore.self])
            let context = ModelContext(store)
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            var open: [Date] = []
            for i in (0..<40).reversed() {
                let chore = Chore()
                chore.due = start + Double(i) * 3600
                chore.done = i % 3 == 0
                if !chore.done { open.append(chore.due) }
                context.insert(chore)
            }
            try context.save()

            let openByDue = try store.schema.index("Chore", ["done", "due"])
            var dates: [Date] = []
            store.snapshot.forEachEntry(openByDue, from: [.bool(false)], to: [.bool(false)]) { entry in
                dates.append(entry.date(1) ?? .distantPast)   // position 1: due
            }

            #expect(dates == open.sorted())
            var done = 0
            store.snapshot.forEachEntry(openByDue, from: [.bool(true)]) { entry in
                if entry.bool(0) == true, entry.date(0) == nil, entry.int(1) == nil { done += 1 }
            }
            #expect(done == 40 - open.count, "typed reads answer nil for another kind of value")
        }
    }
}

import Foundation
import Testing
import Trellis

/// The examples of "Migrations" (Trellis.docc/Migrations.md) and the README's custom stage, verbatim, run and checked
/// (see `ReadmeTests` for how). The first version of the models is `GettingStartedExample`'s.
@Suite struct MigrationDocTests {
    /// The next version of `Chore` renames `title` and adds `priority`: the dry run refuses a store it cannot migrate
    /// (printing why) and lists the steps for one it can, and opening migrates.
    // swift-format-ignore
    @Test func theDryRunRefusesOrListsTheStepsAndOpeningMigrates() throws {
        let printed = Printed()
        func print(_ items: Any...) { printed.append(items) }
        let url = DocsScratch.directory()
        defer { DocsScratch.remove(url) }
        do {
            let store = try Store(
                directory: url, models: [GettingStartedExample.Project.self, GettingStartedExample.Chore.self])
            let context = ModelContext(store)
            for title in ["plan", "build", "ship"] {
                let chore = GettingStartedExample.Chore()
                chore.title = title
                context.insert(chore)
            }
            try context.save()
            try store.close()
        }
        // A store whose chores hold `done` as a string: turning it into a Bool could lose data.
        let refused = DocsScratch.directory()
        defer { DocsScratch.remove(refused) }
        do {
            let store = try Store(directory: refused, schema: try Schema([
                EntityDescription("Chore", attributes: [
                    AttributeDescription("title", .string), AttributeDescription("done", .string),
                ]),
            ]))
            try store.write { tx in _ = try tx.insert("Chore", ["title": "old", "done": "yes"]) }
            try store.close()
        }

        final class Project: Model {
            @Attribute(.unique) var name = ""
            @Relationship(deleteRule: .cascade, inverse: \Chore.project) var chores: [Chore]
        }

        func dryRun(_ url: URL) throws {
            let plan = try Store.plannedMigration(directory: url, schema: Schema(models: [Project.self, Chore.self]))
            guard plan.canRun else { print(plan.problems.joined(separator: "\n")); return }
            print(plan.steps)
        }

        try dryRun(refused)
        #expect(printed.lines.count == 1)
        #expect(printed.lines[0].contains("done"))
        #expect(throws: TrellisError.self) { try Store(directory: refused, models: [Project.self, Chore.self]) }
        try dryRun(url)
        #expect(printed.lines.count == 2)
        #expect(printed.lines[1].contains("headline") && printed.lines[1].contains("priority"))

        final class Chore: Model {
            @Attribute(originalName: "title") var headline = ""    // renamed: the values move with it
            @Attribute(.indexed) var due = Date.distantFuture
            @Attribute var done = false
            @Attribute var priority = 2                             // new: every stored chore gets 2
            @Relationship var project: Project?
        }
        let store = try Store(directory: url, models: [Project.self, Chore.self])   // migrates, in one atomic record

        let chores = try ModelContext(store).fetch(FetchDescriptor<Chore>(sortBy: [SortDescriptor(\.headline)]))
        #expect(chores.map(\.headline) == ["build", "plan", "ship"])
        #expect(chores.allSatisfy { $0.priority == 2 })
        #expect(store.schema.history.count == 1)
        try store.close()
    }

    /// The custom stage splits each person's name into first and last; the plan's versions are those of
    /// `CustomStageTests` (the contacts fixture, 150 people named "First<i> Last<i>").
    // swift-format-ignore
    @Test func theCustomStageSplitsEveryNameInTheOpenThatMigrates() throws {
        let url = DocsScratch.directory()
        defer { DocsScratch.remove(url) }
        let people: [ObjectID]
        do {
            let store = try Store(directory: url, schema: try ContactsV1.makeSchema())
            people = try MigrationFixtures.seed(store)
            try store.close()
        }

        enum ContactsPlan: SchemaMigrationPlan {
            static var schemas: [any VersionedSchema.Type] { [ContactsV1.self, ContactsV2.self] }
            static var stages: [MigrationStage] {
                [.custom(fromVersion: ContactsV1.self, toVersion: ContactsV2.self) { context in
                    for id in try context.old.fetch(DynamicQuery("Person")) {
                        guard case .string(let name) = try context.old.value(id, "name") else { continue }
                        let parts = name.split(separator: " ", maxSplits: 1).map(String.init)
                        try context.transaction.set(context.newID(id)!, "first", .string(parts[0]))
                        try context.transaction.set(context.newID(id)!, "last", .string(parts.count > 1 ? parts[1] : ""))
                    }
                }]
            }
        }
        let store = try Store(directory: url, migrationPlan: ContactsPlan.self)

        #expect(people.count == 150)
        for (i, id) in people.enumerated() {
            #expect(try store.snapshot.value(id, "first") == .string("First\(i)"))
            #expect(try store.snapshot.value(id, "last") == .string("Last\(i)"))
        }
        #expect(store.schema.history.map(\.toVersion) == ["2.0.0"])
        try store.close()
    }
}

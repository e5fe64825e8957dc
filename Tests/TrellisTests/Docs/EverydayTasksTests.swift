import Foundation
import Testing
import Trellis

/// The models of "Everyday Tasks" (Trellis.docc/EverydayTasks.md), verbatim; `Project` and `Chore` in this namespace
/// are the article's, not the test module's.
enum EverydayExample {
    final class Project: Model {
        @Attribute(.unique) var name = ""
        @Relationship(deleteRule: .cascade, inverse: \Chore.project) var chores: [Chore]
    }

    final class Chore: Model {
        @Attribute var title = ""
        @Attribute(.indexed) var due = Date.distantFuture
        @Attribute var done = false
        @Attribute(.indexed) var estimate = 0
        @Relationship var project: Project?

        convenience init(_ title: String, estimate: Int = 0) {
            self.init()
            self.title = title
            self.estimate = estimate
        }
    }

    final class Shift: Model {
        @Attribute var worker = ""
        @Attribute var day = Date.distantPast
        @Attribute var hours = 8

        override class var indexes: [ModelIndex] {
            [.unique(\Shift.worker, \Shift.day), .index(\Shift.day, \Shift.hours)]
        }
    }
}

extension EverydayExample {
    /// The article's examples, verbatim, run and checked (see `ReadmeTests` for how).
    @MainActor @Suite struct EverydayTasksTests {
        /// A store of three saved chores: "Buy milk" (estimate 2) and "Fix the door" (3) open, "Paint the fence" (8)
        /// done; the context that saved them, and the ID of the first.
        private func seeded() throws -> (Store, ModelContext, ObjectID) {
            let store = try Store(models: [Project.self, Chore.self])
            let context = ModelContext(store)
            let milk = Chore("Buy milk", estimate: 2)
            context.insert(milk)
            context.insert(Chore("Fix the door", estimate: 3))
            let fence = Chore("Paint the fence", estimate: 8)
            fence.done = true
            context.insert(fence)
            try context.save()
            return (store, context, try #require(milk.objectID))
        }

        // swift-format-ignore
        @Test func aChildContextSavesIntoItsParentWhichCommitsIt() throws {
            let printed = Printed()
            func print(_ items: Any...) { printed.append(items) }
            let (store, context, id) = try seeded()
            let sequence = store.snapshot.sequence

            let sheet = ModelContext(parent: context)
            let chore = sheet.model(for: id, as: Chore.self)!
            chore.title = "Water the plants"
            try sheet.save()                        // into `context`: pending there, not in the store yet
            print(context.hasChanges)               // true
            try context.save()                      // one commit

            #expect(printed.lines == ["true"])
            #expect(store.snapshot.sequence == sequence + 1)
            #expect(try store.snapshot.value(id, "title") == "Water the plants")
            #expect(!sheet.hasChanges && !context.hasChanges)
        }

        // swift-format-ignore
        @Test func aConflictIsListedThenMergedPropertyByProperty() throws {
            let printed = Printed()
            func print(_ items: Any...) { printed.append(items) }
            let (store, context, id) = try seeded()
            let elsewhere = ModelContext(store)
            let theirs = try #require(elsewhere.model(for: id, as: Chore.self))
            theirs.title = "Buy bread"
            theirs.done = true
            try elsewhere.save()
            try #require(context.model(for: id, as: Chore.self)).title = "Buy oat milk"

            do {
                try context.save()
            } catch let error as TrellisError where error.code == .conflict {
                for conflict in context.conflicts() {
                    print(conflict)                 // Chore#1: this context changed title, the store changed title, done
                }
                context.mergePolicy = .mergeByProperty(favoring: .context)
                try context.save()                  // the title from this context, `done` from the store
            }

            #expect(printed.lines == ["Chore#1: this context changed title, the store changed title, done"])
            #expect(try store.snapshot.value(id, "title") == "Buy oat milk")
            #expect(try store.snapshot.value(id, "done") == true)
        }

        // swift-format-ignore
        @Test func aRootContextReportsWhatItsRefreshBrings() throws {
            let printed = Printed()
            func print(_ items: Any...) { printed.append(items) }
            let (store, _, id) = try seeded()

            let reader = ModelContext(store)        // stays on its snapshot until it refreshes
            let token = reader.onChange { changes in
                for (id, names) in changes.updated { print(id, names.sorted()) }
            }
            try store.write { tx in try tx.set(id, "done", true) }
            reader.refresh()                        // prints 1#1 ["done"]
            token.cancel()

            #expect(printed.lines == [#"1#1 ["done"]"#])
            #expect(id.description == "1#1")
            #expect(reader.model(for: id, as: Chore.self)?.done == true)
        }

        /// The deletion runs on a background thread while the loop waits on the stream.
        @Test func theChangesStreamEndsTheWaitOnceTheChoreIsDeletedElsewhere() async throws {
            let printed = Printed()
            func print(_ items: Any...) { printed.append(items) }
            let (store, _, id) = try seeded()
            let view = store.viewContext
            let deleting = Task {
                try await store.performBackgroundTask { context in
                    context.delete(id)
                    try context.save()
                }
            }

            for await changes in view.changes() where changes.deleted.contains(id) {
                print("deleted elsewhere")
                break
            }

            try await deleting.value
            #expect(printed.lines == ["deleted elsewhere"])
            #expect(!view.exists(id))
        }

        // swift-format-ignore
        @Test func aggregatesGroupByDoneAndFetchPropertiesReadsTheOpenChoresColumns() throws {
            let printed = Printed()
            func print(_ items: Any...) { printed.append(items) }
            let (_, context, _) = try seeded()

            let rows = try context.aggregate(
                FetchDescriptor<Chore>(), [.count, .sum(\.estimate), .max(\.estimate)], groupBy: [\.done])
            for row in rows {
                print(row.group["done"]!, row["count"]!, row["sum(estimate)"]!, row["max(estimate)"]!)
            }                                       // false 2 5 3, then true 1 8 8

            let open = try context.fetchProperties(
                FetchDescriptor<Chore>(predicate: #Predicate { !$0.done }, sortBy: [SortDescriptor(\.estimate)]),
                [\.title, \.estimate])
            for row in open { print(row["title"]!, row["estimate"]!) }   // "Buy milk" 2, then "Fix the door" 3

            #expect(printed.lines == ["false 2 5 3", "true 1 8 8", #""Buy milk" 2"#, #""Fix the door" 3"#])
        }

        // swift-format-ignore
        @Test func explainShowsTheEqualityOnTheEstimateIndex() throws {
            let printed = Printed()
            func print(_ items: Any...) { printed.append(items) }
            let (_, context, _) = try seeded()

            let plan = try context.explain(FetchDescriptor<Chore>(predicate: #Predicate { $0.estimate == 3 }))
            print(plan)             // Chore: index equality on (estimate) (estimate = 3), ~1 candidates; filter: none; sort: in memory
            print(plan.access == .indexEquality, plan.index!)   // true ["estimate"]

            #expect(printed.lines == [
                "Chore: index equality on (estimate) (estimate = 3), ~1 candidates; filter: none; sort: in memory",
                #"true ["estimate"]"#,
            ])
        }

        // swift-format-ignore
        @Test func theBatchOperationsEachCommitOnceAndTheViewContextFollows() throws {
            let printed = Printed()
            func print(_ items: Any...) { printed.append(items) }
            let store = try Store(models: [Project.self, Chore.self])

            let imported = try store.batchInsert(Chore.self, count: 1_000) { i, row in
                row[\.title] = "imported \(i)"
                row[\.estimate] = i % 5
            }
            let closed = try store.batchUpdate(
                Chore.self, where: #Predicate { $0.estimate == 0 }, set: [.init(\.done, true)])
            let removed = try store.batchDelete(Chore.self, where: #Predicate { $0.done })
            print(imported.objects.count, closed.objects.count, removed.objects.count)   // 1000 200 200

            #expect(printed.lines == ["1000 200 200"])
            #expect([imported.sequence, closed.sequence, removed.sequence] == [1, 2, 3])
            #expect(Set(closed.objects) == Set(removed.objects))
            let view = store.viewContext
            view.refresh()
            #expect(try view.fetchCount(FetchDescriptor<Chore>()) == 800)
            #expect(try view.fetchCount(FetchDescriptor<Chore>(predicate: #Predicate { $0.estimate == 0 })) == 0)
        }

        @Test func theShiftIndexesServeALookupAndARange() throws {
            let store = try Store(models: [Shift.self])
            let context = ModelContext(store)
            let monday = Date(timeIntervalSince1970: 1_800_000_000)
            let lookup = try context.explain(
                FetchDescriptor<Shift>(predicate: #Predicate { $0.worker == "Ada" && $0.day == monday }))
            #expect(lookup.access == .uniqueLookup && lookup.index == ["worker", "day"])
            let range = try context.explain(
                FetchDescriptor<Shift>(predicate: #Predicate { $0.day == monday && $0.hours > 6 }))
            #expect(range.access == .indexRange && range.index == ["day", "hours"])
        }

        /// The error example as a function of the context, run on a duplicate shift (rolled back), a conflict (saved
        /// with the store's version) and an assignment to a deleted shift (rethrown).
        // swift-format-ignore
        @Test func theErrorSwitchRollsBackADuplicateRetriesAConflictAndRethrowsTheRest() throws {
            let printed = Printed()
            func print(_ items: Any...) { printed.append(items) }
            func save(_ context: ModelContext) throws {
                do {
                    try context.save()
                } catch let error as TrellisError {
                    switch error.code {
                    case .uniqueViolation:
                        print("already planned:", error.message)
                        context.rollback()
                    case .conflict:
                        context.mergePolicy = .storeWins
                        try context.save()
                    default:
                        throw error
                    }
                }
            }

            let store = try Store(models: [Shift.self])
            let monday = Date(timeIntervalSince1970: 1_800_000_000)
            let context = ModelContext(store)
            let planned = Shift()
            planned.worker = "Ada"
            planned.day = monday
            context.insert(planned)
            try save(context)
            let twice = Shift()
            twice.worker = "Ada"
            twice.day = monday
            context.insert(twice)
            try save(context)
            #expect(printed.lines.count == 1 && printed.lines[0].hasPrefix("already planned: "))
            #expect(!context.hasChanges)
            #expect(try store.snapshot.count("Shift") == 1)

            let id = try #require(planned.objectID)
            let elsewhere = ModelContext(store)
            try #require(elsewhere.model(for: id, as: Shift.self)).hours = 6
            try elsewhere.save()
            planned.hours = 10
            try save(context)
            #expect(try store.snapshot.value(id, "hours") == 6)
            #expect(!context.hasChanges)

            context.delete(planned)
            planned.hours = 4
            let error = #expect(throws: TrellisError.self) { try save(context) }
            #expect(error?.code == .missingObject)
        }
    }
}

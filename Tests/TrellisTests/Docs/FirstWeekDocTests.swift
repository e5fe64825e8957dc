import Foundation
import Testing
import Trellis

/// The examples added to "Everyday Tasks" and "Queries and Indexes" for issue 16 (enumerations, initialisers with
/// parameters, a unique violation's fields, optional and to-one index use), verbatim, run and checked.
enum FirstWeekExample {
    enum Priority: String, Codable {
        case low, normal, high
    }

    final class Errand: Model {
        @Attribute var title = ""
        @Attribute(.indexed) var priority = Priority.normal
        @Attribute var waitingOn: Priority?
    }

    final class Label: Model {
        @Attribute var text = ""

        init(text: String) {
            super.init()
            self.text = text
        }

        required init() { super.init() }
    }

    final class ReminderList: Model {
        @Attribute(.indexed) var name = ""
        @Relationship(inverse: \Reminder.list) var reminders: [Reminder]
    }

    final class Reminder: Model {
        @Attribute var title = ""
        @Attribute(.indexed) var due: Date?
        @Relationship var list: ReminderList?
    }
}

extension FirstWeekExample {
    @Suite struct FirstWeekDocTests {
        // swift-format-ignore
        @Test func anEnumerationIsStoredByItsRawValueAndItsPredicateUsesTheIndex() throws {
            let store = try Store(models: [Errand.self])
            let context = ModelContext(store)
            for (title, priority) in [("call", Priority.high), ("mail", .low), ("fix", .high)] {
                let errand = Errand()
                errand.title = title
                errand.priority = priority
                context.insert(errand)
            }
            try context.save()

            let high = Priority.high
            let urgent = try context.fetch(FetchDescriptor<Errand>(predicate: #Predicate { $0.priority == high }))

            #expect(Set(urgent.map(\.title)) == ["call", "fix"])
            #expect(urgent.allSatisfy { $0.waitingOn == nil })
            let plan = try context.explain(FetchDescriptor<Errand>(predicate: #Predicate { $0.priority == high }))
            #expect(plan.access == .indexEquality)
            let stored = try store.snapshot.value(try #require(urgent.first?.objectID), "priority")
            #expect(stored == .string("high"))
        }

        @Test func aDesignatedInitialiserWithParametersWorksNextToRequiredInit() throws {
            let store = try Store(models: [Label.self])
            let context = ModelContext(store)
            context.insert(Label(text: "urgent"))
            try context.save()
            let fresh = ModelContext(store)
            #expect(try fresh.fetch(FetchDescriptor<Label>()).map(\.text) == ["urgent"])
        }

        // swift-format-ignore
        @Test func aUniqueViolationNamesTheConstraintTheValuesAndTheExistingObject() throws {
            let printed = Printed()
            func print(_ items: Any...) { printed.append(items) }
            let store = try Store(models: [EverydayExample.Project.self, EverydayExample.Chore.self])
            let context = ModelContext(store)
            typealias Project = EverydayExample.Project
            let launch = Project()
            launch.name = "Launch"
            context.insert(launch)
            try context.save()

            do {
                let duplicate = Project()
                duplicate.name = "Launch"
                context.insert(duplicate)
                try context.save()
            } catch let error as TrellisError where error.code == .uniqueViolation {
                let clash = error.uniqueViolation!
                print(clash.attributes, clash.values, clash.existing == launch.objectID)   // ["name"] ["Launch"] true
                context.rollback()
            }

            #expect(printed.lines == [#"["name"] ["Launch"] true"#])
            #expect(try store.snapshot.count("Project") == 1)
        }

        // swift-format-ignore
        @Test func optionalRangesAndToOnePathsUseTheIndexInEachSpelling() throws {
            let printed = Printed()
            func print(_ items: Any...) { printed.append(items) }
            let store = try Store(models: [ReminderList.self, Reminder.self])
            let context = ModelContext(store)
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            let cutoff = start.addingTimeInterval(10 * 86_400)
            var lists: [ReminderList] = []
            for name in ["Home", "Work", "Errands"] {
                let list = ReminderList()
                list.name = name
                context.insert(list)
                lists.append(list)
            }
            for i in 0..<300 {
                let reminder = Reminder()
                reminder.title = "r\(i)"
                reminder.due = i % 3 == 0 ? nil : start.addingTimeInterval(Double(i) * 86_400)
                reminder.list = i % 5 == 0 ? nil : lists[i % 3]
                context.insert(reminder)
            }
            try context.save()

            let never = Date.distantFuture
let soon = [
                #Predicate<Reminder> { $0.due != nil && $0.due! < cutoff },
                #Predicate<Reminder> { ($0.due ?? never) < cutoff },
                #Predicate<Reminder> { $0.due.flatMap { $0 < cutoff } == true },
                #Predicate<Reminder> { if let due = $0.due { due < cutoff } else { false } },
            ]
            for predicate in soon {
                print(try context.explain(FetchDescriptor(predicate: predicate)).access)   // indexRange
            }
            let home = try context.explain(FetchDescriptor<Reminder>(predicate: #Predicate { $0.list?.name == "Home" }))
            print(home.access, home.relationship!, home.inverse!)   // throughRelationship list reminders

            #expect(printed.lines == Array(repeating: "indexRange", count: 4) + ["throughRelationship list reminders"])
            let expected = (0..<300).filter { $0 % 3 != 0 && $0 < 10 }.map { "r\($0)" }
            for predicate in soon {
                let titles = try context.fetch(FetchDescriptor(predicate: predicate)).map(\.title)
                #expect(titles.sorted() == expected.sorted())
            }
            let homeTitles = try context.fetch(FetchDescriptor<Reminder>(predicate: #Predicate { $0.list?.name == "Home" }))
            #expect(homeTitles.count == (0..<300).filter { $0 % 5 != 0 && $0 % 3 == 0 }.count)
        }
    }
}

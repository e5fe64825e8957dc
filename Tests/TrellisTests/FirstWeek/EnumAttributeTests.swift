import Foundation
import Testing
import Trellis

/// Issue 16, item 5: `enum Mood: String { case calm, busy }` was no attribute type: `@Attribute var mood = Mood.calm`
/// did not compile ("generic struct 'Attribute' requires that 'Mood' conform to 'PersistentValue'") unless the enum
/// declared `PersistentValue`, which SwiftData users never write. An enum whose raw value is storable is an attribute
/// as it is, optional too; its raw value is stored, queried and sorted on.
@Suite struct EnumAttributeTests {
    /// The test process's copy of `trellis-crashtest`'s `Errand` (same name, same declarations: the same entity).
    final class Errand: Model {
        enum Mood: String {
            case calm, busy, frantic
        }

        enum Size: Int {
            case small = 1
            case large = 3
        }

        @Attribute var title = ""
        @Attribute var mood = Mood.calm
        @Attribute var size: Size?

        convenience init(_ title: String, _ mood: Mood, _ size: Size? = nil) {
            self.init()
            self.title = title
            self.mood = mood
            self.size = size
        }
    }

    /// `#Predicate` needs the values it captures to be `Codable`; sorting with `SortDescriptor` needs `Comparable`.
    enum Urgency: String, Codable {
        case low, high, urgent
    }

    enum Level: Int, Codable, Comparable {
        case one = 1, two, three

        static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
    }

    final class Alarm: Model {
        @Attribute var name = ""
        @Attribute(.indexed) var urgency = Urgency.low
        @Attribute var fallback: Urgency?
        @Attribute var level: Level = .two

        convenience init(_ name: String, _ urgency: Urgency, fallback: Urgency? = nil, level: Level = .two) {
            self.init()
            self.name = name
            self.urgency = urgency
            self.fallback = fallback
            self.level = level
        }
    }

    @Test func anEnumWithARawValueIsAnAttributeWithoutAnyOtherConformance() throws {
        let store = try Store(models: [Errand.self])
        let attributes = store.schema.entities[0].attributes
        #expect(attributes.map(\.name) == ["title", "mood", "size"])
        #expect(attributes[1] == AttributeDescription("mood", .string, default: "calm"))
        #expect(attributes[2] == AttributeDescription("size", .int, optional: true, default: .null))

        let context = ModelContext(store)
        let walk = Errand("walk", .busy, .large)
        let nap = Errand("nap", .calm)
        #expect(walk.mood == .busy && walk.size == .large && nap.size == nil, "unmanaged objects hold their enums")
        context.insert(walk)
        context.insert(nap)
        #expect(walk.mood == .busy && walk.size == .large, "inserted, they read the context's raw values back")
        try context.save()
        let id = try #require(walk.objectID)
        #expect(try store.snapshot.value(id, "mood") == "busy")
        #expect(try store.snapshot.value(id, "size") == .int(3))

        let other = ModelContext(store)
        let read = try #require(other.model(for: id, as: Errand.self))
        #expect(read.mood == .busy && read.size == .large)
        read.size = nil
        read.mood = .frantic
        try other.save()
        #expect(try store.snapshot.value(id, "size") == .null)
        let again = try ModelContext(store).fetch(FetchDescriptor<Errand>())
        #expect(again.map(\.mood) == [.frantic, .calm] && again.map(\.size) == [nil, nil])
    }

    @Test func enumAttributesReadBackAfterAnotherProcessReopensTheStore() throws {
        let temporary = TemporaryDirectory()
        let directory = temporary.store
        do {
            let store = try Store(directory: directory, models: [Errand.self])
            let context = ModelContext(store)
            context.insert(Errand("walk", .busy, .large))
            context.insert(Errand("nap", .calm))
            try context.save()
            try store.close()
        }
        let child = try CrashChild.run(["errands", "--dir", directory.path, "--add", "run,frantic,1"])
        #expect(child.exitStatus == 0 && !child.killed, "\(child.lines)")
        #expect(
            child.lines == ["errand walk\tbusy\t3", "errand nap\tcalm\tnil", "errand run\tfrantic\t1", "closed 2"])

        let store = try Store(directory: directory, models: [Errand.self])
        let errands = try ModelContext(store).fetch(FetchDescriptor<Errand>(sortBy: [SortDescriptor(\.title)]))
        #expect(errands.map(\.title) == ["nap", "run", "walk"])
        #expect(errands.map(\.mood) == [.calm, .frantic, .busy])
        #expect(errands.map(\.size) == [nil, .small, .large])
        try store.close()
    }

    @Test func predicatesCompareEnumAttributesWithCases() throws {
        let store = try Store(models: [Alarm.self])
        let context = ModelContext(store)
        for alarm in [
            Alarm("fire", .urgent, fallback: .high), Alarm("mail", .low), Alarm("oven", .high, fallback: .low),
            Alarm("door", .urgent),
        ] {
            context.insert(alarm)
        }
        try context.save()
        func names(_ predicate: Predicate<Alarm>) throws -> [String] {
            try ModelContext(store).fetch(FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.name)]))
                .map(\.name)
        }
        let urgent = Urgency.urgent
        #expect(try names(#Predicate { $0.urgency == urgent }) == ["door", "fire"])
        let pressing: [Urgency] = [.high, .urgent]
        #expect(try names(#Predicate { pressing.contains($0.urgency) }) == ["door", "fire", "oven"])
        let none: Urgency? = nil
        #expect(try names(#Predicate { $0.fallback == none }) == ["door", "mail"])
        let low: Urgency? = .low
        #expect(try names(#Predicate { $0.fallback == low }) == ["oven"])
        // The index on urgency answers the equality: the captured case compiled to its stored raw value.
        let predicate = #Predicate<Alarm> { $0.urgency == urgent }
        let plan = try ModelContext(store).explain(FetchDescriptor(predicate: predicate))
        #expect(plan.description.contains("index equality on (urgency)"), "\(plan)")
        #expect(!plan.description.contains("Foundation on objects"), "\(plan)")
    }

    @Test func sortingAndBatchOperationsUseTheRawValue() throws {
        let store = try Store(models: [Alarm.self])
        try store.batchInsert(Alarm.self, count: 3) { i, row in
            row[\.name] = "a\(i)"
            row[\.level] = [Level.three, .one, .two][i]
            row[\.fallback] = i == 0 ? .high : nil
            #expect(row[\.urgency] == .low, "a row starts with the property initializer's case")
        }
        let context = ModelContext(store)
        let byLevel = try context.fetch(FetchDescriptor<Alarm>(sortBy: [SortDescriptor(\.level, order: .reverse)]))
        #expect(byLevel.map(\.name) == ["a0", "a2", "a1"])
        #expect(byLevel.map(\.fallback) == [.high, nil, nil])

        // A case is captured from outside: inside `#Predicate`, `Level.one` reads as a key path and does not compile.
        let one = Level.one
        let result = try store.batchUpdate(
            Alarm.self, where: #Predicate { $0.level != one },
            set: [BatchAssignment(\.urgency, .urgent), BatchAssignment(\.fallback, nil)])
        #expect(result.objects.count == 2)
        let after = try ModelContext(store).fetch(FetchDescriptor<Alarm>(sortBy: [SortDescriptor(\.name)]))
        #expect(after.map(\.urgency) == [.urgent, .low, .urgent])
        #expect(after.map(\.fallback) == [nil, nil, nil])
    }
}

import Foundation
import Observation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// A managed object's composite property keeps its leaves between reads and writes (its slot), and a flat composite
/// is read and built at its fields' offsets instead of through `Codable`: both must give what the store holds after
/// every kind of change, and a one-field change must still record one leaf.
@Suite struct CompositeCacheTests {
    /// Flat: every stored field is a scalar leaf, so it is coded directly.
    struct Stats: Codable, Equatable {
        var label = ""
        var count = 0
        var weight = 0.0
        var flag = false
        var note: String?
        var small: Int8 = 0
        var ratio: Float = 0
        var when = Date(timeIntervalSinceReferenceDate: 0)
    }

    /// Flat but renamed by its coding keys: its stored names are not its leaves', so it goes through `Codable`.
    struct Renamed: Codable, Equatable {
        var first = ""
        var second = 0
        enum CodingKeys: String, CodingKey {
            case first = "alpha"
            case second = "beta"
        }
    }

    final class Gauge: Model {
        @Attribute var name = ""
        @Attribute var stats = Stats()
        @Attribute var renamed = Renamed()
    }

    static func stats(_ i: Int) -> Stats {
        Stats(
            label: "g\(i)", count: i, weight: Double(i) / 4, flag: i % 2 == 0, note: i % 3 == 0 ? nil : "n\(i)",
            small: Int8(i % 100), ratio: Float(i) / 2, when: Date(timeIntervalSinceReferenceDate: Double(i)))
    }

    @Test func flatCompositesAreCodedAtTheirFieldsAndRenamedOnesThroughCodable() throws {
        let statsShape = try CompositeShape.of(Stats.self).get()
        let renamedShape = try CompositeShape.of(Renamed.self).get()
        #expect(DirectFields.of(Stats.self, statsShape) != nil)
        #expect(DirectFields.of(Renamed.self, renamedShape) == nil)
        let direct = try #require(DirectFields.of(Stats.self, statsShape))
        for i in 0..<6 {
            let value = Self.stats(i)
            #expect(direct.leaves(of: value) == statsShape.leaves(of: value))
            #expect(direct.value(Stats.self, from: statsShape.leaves(of: value)) == value)
        }
        // A required field holding null makes no value, as through `Codable`.
        var leaves = statsShape.leaves(of: Self.stats(1))
        leaves[0] = .null
        #expect(direct.value(Stats.self, from: leaves) == nil)

        let store = try Store(models: [Gauge.self])
        let context = ModelContext(store)
        for i in 0..<6 {
            let g = Gauge()
            g.name = "\(i)"
            g.stats = Self.stats(i)
            g.renamed = Renamed(first: "f\(i)", second: i)
            context.insert(g)
        }
        try context.save()
        let reader = ModelContext(store)
        let read = try reader.fetch(FetchDescriptor<Gauge>(sortBy: [SortDescriptor(\.name)]))
        #expect(read.map(\.stats) == (0..<6).map(Self.stats))
        #expect(read.map(\.renamed) == (0..<6).map { Renamed(first: "f\($0)", second: $0) })
        #expect(try reader.fetchCount(FetchDescriptor<Gauge>(predicate: #Predicate { $0.stats.count >= 3 })) == 3)
    }

    @Test func aCachedCompositeFollowsEveryChangeToItsContextsView() throws {
        let store = try Store(models: [Gauge.self])
        let context = ModelContext(store)
        let g = Gauge()
        g.stats = Self.stats(1)
        context.insert(g)
        try context.save()
        let id = try #require(g.objectID)
        #expect(g.stats.count == 1)

        // Another context's commit, once this context moves to it.
        let other = ModelContext(store)
        try #require(other.model(for: id, as: Gauge.self)).stats.count = 20
        try other.save()
        #expect(g.stats.count == 1)  // repeatable read until it moves
        context.refresh()
        #expect(g.stats.count == 20)

        // Its own writes, a rollback, a write after a write.
        g.stats.label = "changed"
        #expect(g.stats.label == "changed" && g.stats.count == 20)
        context.rollback()
        #expect(g.stats.label == "g1")
        g.stats.count += 1
        g.stats.count += 1
        #expect(g.stats.count == 22)

        // A child context reads its parent's pending value, follows the parent's later writes, and its save reaches
        // the parent's object.
        let child = ModelContext(parent: context)
        let inChild = try #require(child.model(for: id, as: Gauge.self))
        #expect(inChild.stats.count == 22)
        g.stats.count = 30
        #expect(inChild.stats.count == 30)
        inChild.stats.flag = true
        #expect(g.stats.flag == false)
        try child.save()
        #expect(g.stats.flag == true && g.stats.count == 30)
        try context.save()
        let reader = ModelContext(store)
        #expect(try #require(reader.model(for: id, as: Gauge.self)).stats.count == 30)

        // A delete: the object keeps reading its last values, and writes to it are refused at the next save.
        context.delete(g)
        #expect(g.stats.count == 30)
        g.stats.count = 31
        #expect(throws: TrellisError.self) { try context.save() }
    }

    @Test func aOneFieldChangeRecordsOneLeafAndNotifiesObservers() throws {
        let temporary = TemporaryDirectory()
        let store = try Store(directory: temporary.store, models: [Gauge.self])
        let context = ModelContext(store)
        let g = Gauge()
        g.stats = Self.stats(2)
        context.insert(g)
        try context.save()
        let changed = Flag()
        withObservationTracking {
            _ = g.stats
        } onChange: {
            changed.set()
        }
        g.stats.count += 5
        #expect(changed.isSet)
        // Assigning the same value again changes nothing.
        g.stats = g.stats
        try context.save()
        try store.close()
        var updates: [[String]] = []
        _ = try JournalReader(directory: temporary.store).forEachRecord { record in
            for update in record.changes.updates {
                let names = record.schema.entities[0].attributes.map(\.name)
                updates.append(update.changes.map { "\(names[$0.attribute.index]) \($0.old) -> \($0.new)" })
            }
        }
        #expect(updates == [["stats.count 2 -> 7"]])
    }

    @Test func aConflictOnALeafIsFoundAfterTheContextMoved() throws {
        let store = try Store(models: [Gauge.self])
        let setup = ModelContext(store)
        let g = Gauge()
        g.stats = Self.stats(3)
        setup.insert(g)
        try setup.save()
        let id = try #require(g.objectID)

        let mine = ModelContext(store)
        let theirs = ModelContext(store)
        try #require(mine.model(for: id, as: Gauge.self)).stats.count = 100
        // Another commit moves `mine` on (its first change was read from the older version) before it saves.
        try #require(theirs.model(for: id, as: Gauge.self)).stats.count = 200
        try theirs.save()
        mine.refresh()
        let error = #expect(throws: TrellisError.self) { try mine.save() }
        #expect(error?.code == .conflict)
        mine.mergePolicy = .contextWins
        try mine.save()
        #expect(try #require(ModelContext(store).model(for: id, as: Gauge.self)).stats.count == 100)
    }
}

/// A flag set from an observation callback.
private final class Flag: @unchecked Sendable {
    private var value = false
    func set() { value = true }
    var isSet: Bool { value }
}

/// An in-place change of a flat composite (`object.composite.field += 1`) reads the fields straight from the
/// snapshot's row when the context has not touched the object, and records the fields that differ before and after:
/// it must agree with a plain get and set in every state of the object.
@Suite struct InPlaceCompositeChangeTests {
    /// Every field kind the row is read for without a `Value`, and an optional one read through it.
    struct Reading: Codable, Equatable {
        var label = ""
        var count = 0
        var big: Int64 = 0
        var small: Int32 = 0
        var level = 0.0
        var on = false
        var at = Date(timeIntervalSinceReferenceDate: 0)
        var note: String?
    }

    final class Sensor: Model {
        @Attribute var name = ""
        @Attribute var reading = Reading()
    }

    static func reading(_ i: Int) -> Reading {
        Reading(
            label: "r\(i)", count: i, big: Int64(i) << 40, small: Int32(-i), level: Double(i) / 8, on: i % 2 == 0,
            at: Date(timeIntervalSinceReferenceDate: Double(i) * 60), note: i % 2 == 0 ? nil : "n\(i)")
    }

    /// The leaves each update record of the journal changes, as "leaf old -> new".
    static func journalUpdates(_ directory: URL) throws -> [[String]] {
        var updates: [[String]] = []
        _ = try JournalReader(directory: directory).forEachRecord { record in
            let names = record.schema.entities[0].attributes.map(\.name)
            for update in record.changes.updates {
                updates.append(update.changes.map { "\(names[$0.attribute.index]) \($0.old) -> \($0.new)" })
            }
        }
        return updates
    }

    @Test func aChangeInPlaceRecordsExactlyTheFieldsItChangedInEveryStateOfTheObject() throws {
        let shape = try CompositeShape.of(Reading.self).get()
        #expect(DirectFields.of(Reading.self, shape) != nil)
        let temporary = TemporaryDirectory()
        let store = try Store(directory: temporary.store, models: [Sensor.self])
        let setup = ModelContext(store)
        for i in 0..<4 {
            let s = Sensor()
            s.name = "s\(i)"
            s.reading = Self.reading(i)
            setup.insert(s)
        }
        try setup.save()

        // Objects this context has not touched: read from the row.
        let context = ModelContext(store)
        let sensors = try context.fetch(FetchDescriptor<Sensor>(sortBy: [SortDescriptor(\.name)]))
        sensors[0].reading.count += 5
        sensors[1].reading.label += "!"
        sensors[1].reading.small -= 1
        sensors[2].reading.note = "set"
        sensors[3].reading.big += 1
        sensors[3].reading.on.toggle()
        // A change that changes nothing records nothing.
        sensors[2].reading.level += 0
        // The object now has a pending change: the next change reads through it.
        sensors[0].reading.count += 1
        #expect(sensors.map(\.reading.count) == [6, 1, 2, 3])
        #expect(sensors[1].reading.label == "r1!" && sensors[1].reading.small == -2)
        #expect(sensors[2].reading.note == "set" && sensors[3].reading.on == true)
        try context.save()

        // After the save the slots are stale; a child context's change goes through its parent's view.
        sensors[0].reading.at += 60
        let child = ModelContext(parent: context)
        let secondID = try #require(sensors[1].objectID)
        let inChild = try #require(child.model(for: secondID, as: Sensor.self))
        inChild.reading.level *= 2
        #expect(sensors[1].reading.level == 0.125)
        try child.save()
        #expect(sensors[1].reading.level == 0.25)
        try context.save()

        // A deleted object keeps reading its values, and a change to it is refused at the save.
        context.delete(sensors[3])
        sensors[3].reading.count += 1
        #expect(throws: TrellisError.self) { try context.save() }
        context.rollback()
        try store.close()

        // One update a changed object, naming just the leaves that changed (the no-op change and the refused save
        // record nothing).
        let updates = try Self.journalUpdates(temporary.store)
        #expect(
            updates.map { $0.map { String($0.split(separator: " ")[0]) } } == [
                ["reading.count"], ["reading.label", "reading.small"], ["reading.note"], ["reading.big", "reading.on"],
                ["reading.at"], ["reading.level"],
            ])
        #expect(updates.first == ["reading.count 0 -> 6"])
        let reopened = try Store(directory: temporary.store, models: [Sensor.self])
        let read = try ModelContext(reopened).fetch(FetchDescriptor<Sensor>(sortBy: [SortDescriptor(\.name)]))
        var expected = (0..<4).map(Self.reading)
        expected[0].count = 6
        expected[0].at = Date(timeIntervalSinceReferenceDate: 60)
        expected[1].label = "r1!"
        expected[1].small = -2
        expected[1].level = 0.25
        expected[2].note = "set"
        expected[3].big += 1
        expected[3].on = true
        #expect(read.map(\.reading) == expected)
    }

    @Test func twoChangesInPlaceAtOnceKeepTheirOwnValues() throws {
        let store = try Store(models: [Sensor.self])
        let setup = ModelContext(store)
        for i in 0..<2 {
            let s = Sensor()
            s.name = "s\(i)"
            s.reading = Self.reading(i + 1)
            setup.insert(s)
        }
        try setup.save()
        let context = ModelContext(store)
        let sensors = try context.fetch(FetchDescriptor<Sensor>(sortBy: [SortDescriptor(\.name)]))
        // Both in-place changes are open at once: the second cannot use the buffer the first holds.
        swap(&sensors[0].reading, &sensors[1].reading)
        #expect(sensors.map(\.reading) == [Self.reading(2), Self.reading(1)])
        try context.save()
        let read = try ModelContext(store).fetch(FetchDescriptor<Sensor>(sortBy: [SortDescriptor(\.name)]))
        #expect(read.map(\.reading) == [Self.reading(2), Self.reading(1)])
    }
}

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

import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Issue 19: `Codable` composite attributes are stored as one column per leaf field, reached by predicates, sorts
/// and indexes, changed one field at a time, and read back by other processes after journal and checkpoint.
@Suite struct CompositeAttributeTests {
    typealias X = CrashExpectations

    struct Address: Codable, Equatable {
        var street = ""
        var city = ""
        var zip = ""
        var geo: Geo?
    }

    struct Geo: Codable, Equatable {
        var lat = 0.0
        var lon = 0.0
    }

    /// A `Codable` enum stays one column of its raw value.
    enum Tier: String, Codable {
        case basic, gold
    }

    final class Customer: Model {
        @Attribute var name = ""
        @Attribute var address = Address()
        @Attribute var billing: Address?
        @Attribute var tier = Tier.basic
        @Attribute var previousTier: Tier?

        override class var indexes: [ModelIndex] { [.index(\Customer.address.city), .index(\Customer.address.zip)] }
    }

    @Test func aCompositeIsOneColumnPerLeafWithPresenceColumnsForOptionalComposites() throws {
        let schema = try Schema(models: [Customer.self])
        let attributes = schema.entities[0].attributes.map { "\($0.name):\($0.type)\($0.isOptional ? "?" : "")" }
        #expect(
            attributes == [
                "name:String", "address.street:String", "address.city:String", "address.zip:String",
                "address.geo:Bool", "address.geo.lat:Double?", "address.geo.lon:Double?", "billing:Bool",
                "billing.street:String?", "billing.city:String?", "billing.zip:String?", "billing.geo:Bool",
                "billing.geo.lat:Double?", "billing.geo.lon:Double?", "tier:String", "previousTier:String?",
            ])
        #expect(schema.entities[0].indexes.map(\.attributes) == [["address.city"], ["address.zip"]])
    }

    @Test func valuesRoundTripThroughAContextWithNilsAndNesting() throws {
        let store = try Store(models: [Customer.self])
        let context = ModelContext(store)
        let a = Customer()
        a.address = Address(street: "1 rue", city: "Lyon", zip: "69001", geo: Geo(lat: 45.7, lon: 4.8))
        let b = Customer()
        b.billing = Address(street: "", city: "Paris", zip: "75001", geo: nil)
        context.insert(a)
        context.insert(b)
        try context.save()
        let other = ModelContext(store)
        let a2 = other.model(for: a.objectID!, as: Customer.self)!
        let b2 = other.model(for: b.objectID!, as: Customer.self)!
        #expect(a2.address == a.address)
        #expect(a2.billing == nil)
        #expect(b2.address == Address())
        #expect(b2.billing == Address(street: "", city: "Paris", zip: "75001", geo: nil))
        b2.billing?.geo = Geo(lat: 1, lon: 2)
        b2.billing = nil
        b2.billing = Address(city: "Nice")
        try other.save()
        #expect(ModelContext(store).model(for: b.objectID!, as: Customer.self)!.billing == Address(city: "Nice"))
    }

    @Test func changingOneFieldRecordsOneFieldInTheJournal() throws {
        let temporary = TemporaryDirectory()
        let store = try Store(directory: temporary.store, models: [Customer.self])
        let context = ModelContext(store)
        let c = Customer()
        c.address = Address(street: "1 rue", city: "Lyon", zip: "69001", geo: Geo(lat: 45.7, lon: 4.8))
        context.insert(c)
        try context.save()
        c.address.city = "Lille"
        try context.save()
        c.address.geo?.lat = 50.6
        try context.save()
        try store.close()
        var updates: [[String]] = []
        _ = try JournalReader(directory: temporary.store).forEachRecord { record in
            for update in record.changes.updates {
                let names = record.schema.entities[0].attributes.map(\.name)
                updates.append(
                    update.changes.map { "\(names[$0.attribute.index]) \($0.old) -> \($0.new)" })
            }
        }
        #expect(updates == [["address.city \"Lyon\" -> \"Lille\""], ["address.geo.lat 45.7 -> 50.6"]])
    }

    @Test func predicatesSortsAndIndexesReachInsideComposites() throws {
        let store = try Store(models: [Customer.self])
        let context = ModelContext(store)
        let cities = ["Lyon", "Paris", "Nice", "Lille"]
        for i in 0..<200 {
            let c = Customer()
            c.name = "c\(i)"
            c.address = Address(
                street: "\(i) rue", city: cities[i % 4], zip: String(format: "%05d", (i * 37) % 200),
                geo: i % 5 == 0 ? nil : Geo(lat: Double(i), lon: 0))
            context.insert(c)
        }
        try context.save()
        let lyon = FetchDescriptor<Customer>(predicate: #Predicate { $0.address.city == "Lyon" })
        #expect(try context.fetch(lyon).map(\.name) == stride(from: 0, to: 200, by: 4).map { "c\($0)" })
        let plan = try context.explain(lyon)
        #expect(plan.access == .indexEquality && plan.index == ["address.city"], "\(plan)")

        var sorted = FetchDescriptor<Customer>(
            predicate: #Predicate { $0.address.zip < "00010" }, sortBy: [SortDescriptor(\.address.zip)])
        let zips = try context.fetch(sorted).map(\.address.zip)
        #expect(zips == zips.sorted() && zips.count == 10 && zips.allSatisfy { $0 < "00010" })
        #expect(try context.explain(sorted).index == ["address.zip"])
        #expect(try context.explain(sorted).sortedByIndex)
        sorted.predicate = #Predicate { $0.address.street.starts(with: "19") && $0.name != "" }
        let nineteens = (0..<200).filter { "\($0)".hasPrefix("19") }.sorted { ($0 * 37) % 200 < ($1 * 37) % 200 }
        #expect(try context.fetch(sorted).map(\.address.street) == nineteens.map { "\($0) rue" })

        // A dynamic query (the `trellis find` tool's) names a field by its column name, and uses its index.
        let dynamic = DynamicQuery("Customer", where: .equal("address.city", "Lyon"), sortBy: [.init("address.zip")])
        let byZip = try context.fetch(lyon).sorted { ($0.address.zip, $0.objectID!) < ($1.address.zip, $1.objectID!) }
        #expect(try store.snapshot.fetch(dynamic) == byZip.map { $0.objectID! })
        #expect(try store.snapshot.explain(dynamic).index == ["address.city"])

        // A field of an optional nested composite, read through optional chaining: evaluated correctly.
        let north = FetchDescriptor<Customer>(predicate: #Predicate { ($0.address.geo?.lat ?? -1) >= 195 })
        #expect(try context.fetch(north).map(\.name) == ["c196", "c197", "c198", "c199"])
        #expect(try context.fetchCount(FetchDescriptor<Customer>(predicate: #Predicate { $0.billing == nil })) == 200)
    }

    /// Save, journal, checkpoint and reopen, each round in a new process (`trellis-crashtest profiles`): every leaf
    /// type, nested composites, nulls and absent composites come back as written, in the child and here.
    @Test func compositesRoundTripThroughJournalCheckpointAndOtherProcesses() throws {
        let temporary = TemporaryDirectory()
        let store = temporary.store
        for round in 1...7 {
            let child = try CrashChild.run(["profiles", "--dir", store.path, "--add", "\(round)"])
            #expect(child.exitStatus == 0 && !child.killed, "round \(round): \(child.lines.suffix(3))")
            let expected = ProfilesCommand.expected(after: round).map {
                ProfilesCommand.line($0.number, $0.card, $0.backup)
            }
            #expect(Array(child.lines.dropLast()) == expected, "round \(round)")
        }
        #expect(FileManager.default.fileExists(atPath: store.appendingPathComponent("MANIFEST").path))
        #expect(try JournalReader(directory: store).manifest().checkpointSequence > 0, "round 6 compacted")
        let opened = try Store(directory: store, models: [Profile.self])
        let context = ModelContext(opened)
        let profiles = try context.fetch(FetchDescriptor<Profile>(sortBy: [SortDescriptor(\.number)]))
        let expected = ProfilesCommand.expected(after: 7)
        #expect(profiles.map(\.number) == expected.map(\.number))
        for (p, e) in zip(profiles, expected) {
            #expect(p.card == e.card, "profile \(p.number)")
            #expect(p.backup == e.backup, "profile \(p.number)")
        }
        try opened.close()
        #expect(try X.problems(store) == [])
    }

    /// Batch inserts and updates name a composite's fields by key path, like attributes.
    @Test func batchRowsAndAssignmentsReachFields() throws {
        let store = try Store(models: [Customer.self])
        let inserted = try store.batchInsert(Customer.self, count: 10) { i, row in
            row[\.name] = "c\(i)"
            row[\.address.city] = i % 2 == 0 ? "Lyon" : "Nice"
            row[\.address.zip] = "0\(i)"
        }
        try store.batchUpdate(
            Customer.self, where: #Predicate { $0.address.city == "Nice" }, set: [.init(\.address.street, "quai")])
        let context = ModelContext(store)
        let customers = inserted.objects.map { context.model(for: $0, as: Customer.self)! }
        #expect(customers.map(\.address.city) == (0..<10).map { $0 % 2 == 0 ? "Lyon" : "Nice" })
        #expect(customers.map(\.address.street) == (0..<10).map { $0 % 2 == 0 ? "" : "quai" })
        #expect(customers.map(\.address.zip) == (0..<10).map { "0\($0)" })
    }

    enum ParcelV1 {
        struct Label: Codable {
            var to = ""
            var weight = 0
        }

        final class Parcel: Model {
            @Attribute var label = Label()
        }
    }

    enum ParcelV2 {
        struct Label: Codable, Equatable {
            var to = ""
            var note: String?
            var fragile = true
        }

        final class Parcel: Model {
            @Attribute var label = Label()
        }
    }

    /// Adding and removing a composite's fields is a lightweight migration: the store opens with the new struct, keeps
    /// the fields that stayed, gives new ones their defaults (nil for an optional one), and records one migration.
    @Test func addingAndRemovingFieldsIsALightweightMigration() throws {
        let temporary = TemporaryDirectory()
        do {
            let store = try Store(directory: temporary.store, models: [ParcelV1.Parcel.self])
            let context = ModelContext(store)
            for i in 0..<3 {
                let parcel = ParcelV1.Parcel()
                parcel.label = ParcelV1.Label(to: "p\(i)", weight: i)
                context.insert(parcel)
            }
            try context.save()
            try store.close()
        }
        let store = try Store(directory: temporary.store, models: [ParcelV2.Parcel.self])
        #expect(store.schema.history.count == 1)
        #expect(
            store.schema.history.first?.steps.sorted() == [
                "Parcel: add attribute 'label.fragile' (Bool, default true) (3 objects)",
                "Parcel: add attribute 'label.note' (String, null) (3 objects)",
                "Parcel: remove attribute 'label.weight' (3 objects)",
            ], "\(store.schema.history.first?.steps ?? [])")
        let labels = try ModelContext(store).fetch(FetchDescriptor<ParcelV2.Parcel>()).map(\.label)
        #expect(labels == (0..<3).map { ParcelV2.Label(to: "p\($0)", note: nil, fragile: true) })
        try store.close()
    }
}

import Foundation
import Testing
import Trellis

/// The examples of "Structured Attributes" (Trellis.docc/StructuredAttributes.md), verbatim, run and checked.
enum StructuredDoc {
    struct Geo: Codable, Equatable {
        var lat = 0.0
        var lon = 0.0
    }

    struct Address: Codable, Equatable {
        var street = ""
        var city = ""
        var zip = ""
        var geo: Geo?
    }

    final class Customer: Model {
        @Attribute var name = ""
        @Attribute var address = Address()
        @Attribute var billing: Address?

        override class var indexes: [ModelIndex] { [.index(\Customer.address.city)] }
    }

    final class Listing: Model {
        @Attribute var title = ""
        @Attribute(.indexed) var info: [String: MetadataValue] = [:]
    }
}

@MainActor @Suite struct StructuredAttributesDocTests {
    typealias Customer = StructuredDoc.Customer
    typealias Address = StructuredDoc.Address
    typealias Geo = StructuredDoc.Geo

    // swift-format-ignore
    @Test func aCompositeIsWrittenOneFieldAtATimeAndQueriedByItsIndex() throws {
        let printed = Printed()
        func print(_ items: Any...) { printed.append(items) }
        let store = try Store(models: [Customer.self])
        let context = ModelContext(store)
        #expect(
            store.schema.entities[0].attributes.map(\.name) == [
                "name", "address.street", "address.city", "address.zip", "address.geo", "address.geo.lat",
                "address.geo.lon", "billing", "billing.street", "billing.city", "billing.zip", "billing.geo",
                "billing.geo.lat", "billing.geo.lon",
            ])

        let customer = Customer()
        customer.address = Address(street: "1 rue", city: "Lyon", zip: "69001", geo: Geo(lat: 45.76, lon: 4.84))
        context.insert(customer)
        try context.save()

        customer.address.city = "Villeurbanne"   // one column changes
        try context.save()

        let inLyon = FetchDescriptor<Customer>(
            predicate: #Predicate { $0.address.city == "Villeurbanne" },
            sortBy: [SortDescriptor(\.address.zip)])
        let found = try context.fetch(inLyon)
        print(try context.explain(inLyon))   // Customer: index equality on (address.city) …

        #expect(found.map(\.address) == [Address(street: "1 rue", city: "Villeurbanne", zip: "69001", geo: Geo(lat: 45.76, lon: 4.84))])
        #expect(printed.lines.count == 1 && printed.lines[0].hasPrefix("Customer: index equality on (address.city)"), "\(printed.lines)")
        #expect(store.snapshot.sequence == 2)
    }

    // swift-format-ignore
    @Test func typedMetadataIsQueriedByKeyWithinAKind() throws {
        typealias Listing = StructuredDoc.Listing
        let printed = Printed()
        func print(_ items: Any...) { printed.append(items) }
        let store = try Store(models: [Listing.self])
        let context = ModelContext(store)
        let other = Listing()
        other.info = ["color": "blue", "rating": "high"]
        context.insert(other)

        let listing = Listing()
        listing.info = ["color": "red", "rating": 4, "weight": 1.5, "sale": true, "note": .null]
        context.insert(listing)
        try context.save()

        let none = MetadataValue.null
        let red = try context.fetch(FetchDescriptor<Listing>(predicate: #Predicate { $0.info["color"] == "red" }))
        let rated = FetchDescriptor<Listing>(predicate: #Predicate { $0.info["rating", default: none] > 3 })
        print(try context.explain(rated))   // Listing: index range on (info) (info["rating"] > 3), …
        let noted = try context.fetchCount(FetchDescriptor<Listing>(predicate: #Predicate { $0.info["note"] == none }))

        #expect(red.map(\.info) == [listing.info])
        #expect(try context.fetch(rated).map(\.info) == [listing.info], "the string \"high\" is not above 3")
        #expect(noted == 1)
        #expect(try context.fetchCount(FetchDescriptor<Listing>(predicate: #Predicate { $0.info["note"] == nil })) == 1)
        #expect(try context.fetchCount(FetchDescriptor<Listing>(predicate: #Predicate { $0.info["rating"].flatMap { $0 > 3 } == true })) == 1)
        #expect(printed.lines.count == 1 && printed.lines[0].hasPrefix(#"Listing: index range on (info) (info["rating"] > 3)"#), "\(printed.lines)")
    }
}

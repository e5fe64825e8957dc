import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

@Suite struct SchemaValidationTests {
    private func invalid(_ entities: [EntityDescription]) -> String? {
        do {
            _ = try Schema(entities)
            return nil
        } catch let error as TrellisError {
            #expect(error.code == .invalidSchema)
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func missingInverseIsRefusedNamingIt() {
        let message = invalid([
            EntityDescription("A", relationships: [RelationshipDescription("b", to: "B", inverse: "a")]),
            EntityDescription("B"),
        ])
        #expect(message?.contains("'B.a'") == true)
    }

    @Test func mismatchedInverseIsRefused() {
        let message = invalid([
            EntityDescription("A", relationships: [RelationshipDescription("b", to: "B", inverse: "a")]),
            EntityDescription("B", relationships: [RelationshipDescription("a", to: "A", inverse: "other")]),
        ])
        #expect(message?.contains("do not point at each other") == true)
    }

    @Test func duplicateEntityAttributeAndPropertyNamesAreRefused() {
        #expect(
            invalid([EntityDescription("A"), EntityDescription("A")])?.contains("duplicate entity name 'A'") == true)
        #expect(
            invalid([
                EntityDescription(
                    "A", attributes: [AttributeDescription("x", .int), AttributeDescription("x", .string)])
            ])?
            .contains("duplicate attribute name 'x'") == true)
        #expect(
            invalid([
                EntityDescription(
                    "A", attributes: [AttributeDescription("b", .int)],
                    relationships: [RelationshipDescription("b", to: "A", inverse: "b")])
            ])?.contains("duplicate property name 'b'") == true)
    }

    @Test func unknownTargetIsRefused() {
        let message = invalid([
            EntityDescription("A", relationships: [RelationshipDescription("b", to: "Nope", inverse: "a")])
        ])
        #expect(message?.contains("unknown entity 'Nope'") == true)
    }

    @Test func indexOnMissingAttributeIsRefused() {
        let message = invalid([
            EntityDescription("A", attributes: [AttributeDescription("x", .int)], indexes: [.on("x", "y")])
        ])
        #expect(message?.contains("missing attribute 'y'") == true)
    }

    @Test func defaultOfTheWrongTypeIsRefused() {
        let message = invalid([EntityDescription("A", attributes: [AttributeDescription("x", .int8, default: 300)])])
        #expect(message?.contains("is not a Int8") == true)
    }

    @Test func selfInverseToManyIsAllowedAndSymmetric() throws {
        let schema = try Schema([
            EntityDescription(
                "P", relationships: [RelationshipDescription("friends", to: "P", inverse: "friends", toMany: true)])
        ])
        let store = Store(schema: schema)
        var tx = store.transaction()
        let a = try tx.insert("P")
        let b = try tx.insert("P")
        try tx.link(a, "friends", b)
        try store.commit(tx)
        #expect(try store.snapshot.targets(a, "friends") == [b])
        #expect(try store.snapshot.targets(b, "friends") == [a])
    }

    @Test func fingerprintIsStableForEqualSchemasAndChangesWithTheShape() throws {
        let a = try Fixtures.outlineSchema()
        let b = try Fixtures.outlineSchema()
        #expect(a.fingerprint == b.fingerprint)
        var entities = a.entities
        entities[0].attributes[1].isOptional = true
        #expect(try Schema(entities).fingerprint != a.fingerprint)
        entities = a.entities
        entities[1].relationships[0].deleteRule = .cascade
        #expect(try Schema(entities).fingerprint != a.fingerprint)
    }

    @Test func uniqueAndOrderedIndexOnTheSameAttributesShareOneTree() throws {
        let schema = try Schema([
            EntityDescription("A", attributes: [AttributeDescription("x", .int)], indexes: [.on("x"), .unique("x")])
        ])
        #expect(schema.layouts[0].indexes.count == 1)
        #expect(schema.layouts[0].indexes[0].isUnique)
    }
}

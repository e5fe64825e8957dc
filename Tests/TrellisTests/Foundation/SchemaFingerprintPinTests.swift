import Testing

@testable import TrellisCore

/// The schema fingerprint of a fixed schema, pinned. Every store records the fingerprint of its schema and an open
/// compares it with the app's: if what the fingerprint hashes (or how) changes, every user's store stops matching its
/// own app's schema and is stranded. Such a change needs a new format version and a migration path for stored
/// fingerprints; never update these literals to make the test pass.
@Suite struct SchemaFingerprintPinTests {
    @Test func theFingerprintOfAFixedSchemaIsPinned() {
        // Every attribute type, a to-many relationship with its inverse and a cascade rule, a nullify to-one, an
        // index on a string, a number and a date, and a unique index on a string and a UUID.
        #expect(Set(GoldenStore.v1.entities[1].attributes.map(\.type)).count == 14)
        #expect(GoldenStore.v1.fingerprint == 0x2162_8e7d_b89e_e87c)
        // The golden stores' schema after their migration (one more attribute, with a default, and index): the
        // fingerprint the format 4 and 5 builds wrote in those stores' manifests.
        #expect(GoldenStore.v2.fingerprint == 0x2a8a_a669_6131_b54f)
    }

    @Test func theFingerprintIgnoresDefaultsAndOriginalNames() throws {
        var entities = GoldenStore.v2.entities
        entities[1].attributes[14] = AttributeDescription("pinned", .bool, default: false)
        entities[0].attributes[0] = AttributeDescription("name", .string, originalName: "label")
        #expect(try Schema(entities).fingerprint == GoldenStore.v2.fingerprint)
    }
}

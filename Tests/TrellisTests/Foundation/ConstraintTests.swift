import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

@Suite struct ConstraintTests {
    private func commitError(_ store: Store, _ build: (inout Transaction) throws -> Void) throws -> TrellisError? {
        var tx = store.transaction()
        try build(&tx)
        let before = store.snapshot
        let error = #expect(throws: TrellisError.self) { try store.commit(tx) }
        #expect(store.snapshot.sequence == before.sequence)
        #expect(store.snapshot.differences(from: before).isEmpty)
        return error
    }

    @Test func singleAttributeUniqueRejectsADuplicateAndLeavesStoreUnchanged() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        let red = try store.write { tx in try tx.insert("Tag", ["label": "red"]) }
        let error = try commitError(store) { tx in
            try tx.insert("Tag", ["label": "blue"])
            try tx.insert("Tag", ["label": "red"])
        }
        #expect(error?.code == .uniqueViolation)
        #expect(error?.message.contains("Tag(label)") == true)
        #expect(error?.message.contains("Tag#\(red.serial)") == true)
        #expect(try store.snapshot.count("Tag") == 1)
        #expect(try store.snapshot.lookup("Tag", ["label": "red"]) == red)
        #expect(try store.snapshot.lookup("Tag", ["label": "blue"]) == nil)
    }

    @Test func updateIntoAnExistingUniqueValueIsRejected() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        var tx = store.transaction()
        try tx.insert("Tag", ["label": "red"])
        let blue = try tx.insert("Tag", ["label": "blue"])
        try store.commit(tx)
        let error = try commitError(store) { tx in try tx.set(blue, "label", "red") }
        #expect(error?.code == .uniqueViolation)
        // Swapping two values in one commit is fine: constraints hold on the result.
        try store.write { tx in try tx.set(blue, "label", "green") }
        #expect(try store.snapshot.value(blue, "label") == "green")
    }

    @Test func compoundUniqueRejectsOnlyTheFullDuplicate() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        // email alone is unique too, so use distinct emails with the same region: allowed.
        try store.write { tx in
            try tx.insert("Account", ["email": "a@x", "region": "eu"])
            try tx.insert("Account", ["email": "b@x", "region": "eu"])
        }
        #expect(try store.snapshot.count("Account") == 2)
        let error = try commitError(store) { tx in try tx.insert("Account", ["email": "a@x", "region": "eu"]) }
        #expect(error?.code == .uniqueViolation)
        let found = try store.snapshot.lookup("Account", ["region": "eu", "email": "b@x"])
        #expect(found.map { try? store.snapshot.value($0, "email") } == .some("b@x"))
    }

    @Test func requiredAttributesAndTypesAreChecked() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        let missing = try commitError(store) { tx in try tx.insert("Note", [:]) }
        #expect(missing?.code == .missingValue)
        #expect(missing?.message.contains("'title'") == true)
        var tx = store.transaction()
        #expect(throws: TrellisError.self) { try tx.insert("Note", ["title": 5]) }
        #expect(throws: TrellisError.self) { try tx.insert("Note", ["nope": "x"]) }
        let note = try store.write { tx in try tx.insert("Note", ["title": "t", "score": 3]) }
        #expect(try store.snapshot.value(note, "score") == .double(3))
        let nulling = try commitError(store) { tx in try tx.set(note, "title", .null) }
        #expect(nulling?.code == .missingValue)
    }

    @Test func relationshipCountBoundsAreChecked() throws {
        let schema = try Schema([
            EntityDescription(
                "Team", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription(
                        "members", to: "Person", inverse: "team", toMany: true, minCount: 1, maxCount: 2)
                ]),
            EntityDescription(
                "Person",
                relationships: [RelationshipDescription("team", to: "Team", inverse: "members", optional: false)]),
        ])
        let store = Store(schema: schema)
        let empty = try commitError(store) { tx in try tx.insert("Team", ["name": "empty"]) }
        #expect(empty?.code == .relationshipCount)
        let orphan = try commitError(store) { tx in try tx.insert("Person") }
        #expect(orphan?.code == .relationshipCount)
        let team = try store.write { tx -> ObjectID in
            let team = try tx.insert("Team", ["name": "a"])
            try tx.link(try tx.insert("Person"), "team", team)
            return team
        }
        let crowded = try commitError(store) { tx in
            try tx.link(try tx.insert("Person"), "team", team)
            try tx.link(try tx.insert("Person"), "team", team)
        }
        #expect(crowded?.code == .relationshipCount)
        #expect(crowded?.object == team)
    }

    @Test func linkingAMissingObjectOrUpdatingADeletedOneFails() throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        let folder = try store.write { tx in try tx.insert("Folder", ["name": "f"]) }
        let ghost = ObjectID(entity: folder.entity, serial: 999)
        let link = try commitError(store) { tx in try tx.link(folder, "children", ghost) }
        #expect(link?.code == .missingObject)
        let update = try commitError(store) { tx in try tx.set(ghost, "name", "x") }
        #expect(update?.code == .missingObject)
        let delete = try commitError(store) { tx in try tx.delete(ghost) }
        #expect(delete?.code == .missingObject)
    }
}

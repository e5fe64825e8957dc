import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Each inferred (lightweight) step (`LightweightCase`): a v1 store reopened with a v2 schema keeps its objects,
/// values, relationships and IDs, and the migration survives another reopen (it is in the journal, not only in memory).
@Suite struct LightweightMigrationTests {
    /// Seeds a v1 store, reopens it with the case's v2 schema, runs its check on the migrated store and again after a
    /// plain reopen and after compaction.
    func migrate(_ step: LightweightCase) throws {
        let directory = MigrationFixtures.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let people: [ObjectID]
        do {
            let store = try Store(directory: directory, schema: try MigrationFixtures.v1())
            people = try MigrationFixtures.seed(store)
            try store.close()
        }
        let v2 = try step.v2()
        let migrated = try Store(directory: directory, schema: v2)
        #expect(migrated.schema.history.count == 1)
        try step.check(migrated, people)
        try migrated.close()
        let reopened = try Store(directory: directory, schema: v2)
        #expect(reopened.schema.history.count == 1)
        try step.check(reopened, people)
        try reopened.compact()
        try reopened.close()
        let compacted = try Store(directory: directory, schema: v2)
        #expect(compacted.schema.history.count == 1, "the history survives compaction")
        try step.check(compacted, people)
        try compacted.close()
    }

    @Test func addingAnAttributeFillsItsDefaultAndKeepsEveryValueAndID() throws { try migrate(.addAttribute) }

    @Test func addingAnOptionalAttributeWithoutDefaultFillsNull() throws { try migrate(.addOptionalAttribute) }

    @Test func removingAnAttributeDropsItsColumnOnly() throws { try migrate(.removeAttribute) }

    @Test func renamingAnAttributeByItsOriginalNameKeepsItsValues() throws { try migrate(.renameAttribute) }

    @Test func renamingAnEntityKeepsItsObjectsIDsAndRelationships() throws { try migrate(.renameEntity) }

    @Test func addingAnEntityAndARelationshipStartsThemEmpty() throws { try migrate(.addEntityAndRelationship) }

    @Test func aRemovedEntitysNumberAndSerialsAreNeverGivenOutAgain() throws {
        let directory = MigrationFixtures.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(directory: directory, schema: try MigrationFixtures.v1())
        try MigrationFixtures.seed(store)
        try store.close()
        var entities = MigrationFixtures.v1Entities
        entities.removeAll { $0.name == "Team" }
        entities[0].relationships.removeAll()
        entities.append(EntityDescription("Label", attributes: [AttributeDescription("text", .string)]))
        let v2 = try Store(directory: directory, schema: Schema(entities))
        #expect(try v2.schema.entityNumber("Label") == 2, "a new entity does not take the removed one's number")
        var tx = v2.transaction()
        #expect(throws: TrellisError.self) { try tx.insert("Team", ["title": "x"]) }
        try v2.close()
        // Declaring Team again brings it back empty, in its old place, with serials above its old ones.
        var v3 = entities
        v3.append(EntityDescription("Team", attributes: [AttributeDescription("title", .string)]))
        let store3 = try Store(directory: directory, schema: Schema(v3))
        #expect(try store3.schema.entityNumber("Team") == 0)
        #expect(try store3.snapshot.count("Team") == 0)
        let team = try store3.write { tx in try tx.insert("Team", ["title": "again"]) }
        #expect(team.serial == UInt64(MigrationFixtures.teams) + 1)
        try store3.close()
    }

    @Test func removingAnEntityRemovesItsObjectsAndTheInverseRelationship() throws { try migrate(.removeEntity) }

    @Test func renamingARelationshipKeepsItsTargets() throws { try migrate(.renameRelationship) }

    @Test func optionalityChangesFillNullsWithTheDefault() throws { try migrate(.optionality) }

    @Test func wideningNumbersKeepsTheirValues() throws {
        try migrate(.widenToInt64)
        try migrate(.widenToDouble)
    }

    @Test func deleteRulesAndCountsTheDataMeetsChangeInPlace() throws { try migrate(.deleteRuleAndCounts) }

    @Test func anAddedIndexIsUsedByQueries() throws { try migrate(.addIndex) }
}

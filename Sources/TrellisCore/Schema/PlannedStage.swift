/// One stage of a migration, planned: the new schema aligned to the stored one, how the data maps, what each step
/// is, what must be checked, and what makes it impossible.
package struct PlannedStage: Sendable {
    package var schema: Schema
    package var mapping: SchemaMapping
    package var steps: [MigrationStep]
    package var checks: [MigrationCheck]
    package var problems: [String]
    /// How the two schemas differ, each refused difference with its problem.
    package var differences: [SchemaDifference]
    /// For each check, the position in `differences` of the change it checks.
    package var checkDifferences: [Int]

    package var isNeeded: Bool { !steps.isEmpty }
}

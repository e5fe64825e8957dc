import Foundation
import Trellis

/// `trellis schema-diff STORE SCHEMA.json`: how a schema file differs from the store's, and what opening the store
/// with it would do (no migration, a lightweight one, or a refusal).
struct SchemaDiffCommand: Command {
    static let name = "schema-diff"
    static let summary = "how a schema file differs from the store's; whether opening with it migrates or is refused"
    static let help = """
        usage: trellis schema-diff STORE SCHEMA.json [--json]

        Compares the schema of the store in directory STORE with the one in SCHEMA.json (a schema as `trellis info
        --json` prints it under "schema", as `migrate --to` reads it) and prints one line per difference: entities,
        attributes, relationships and indexes added (+), removed (-), renamed or changed (~: type, optional,
        default, target, inverse, to-many, delete rule, count bounds, unique). Items are matched as a migration
        matches them, by name or by "originalName"; their order is no difference.

        Then it says what opening the store with that schema would do, as `migrate --dry-run` plans it against the
        data: nothing (the same structure: defaults are not part of it), a lightweight migration (every step loses
        nothing; the steps are listed), or a refusal (each problem is listed). It reads without a lock and writes
        nothing.

        Exits 0 when the schemas are identical, 1 when they differ (as diff does), 2 on an error (a bad command line
        or schema file, a damaged store), 3 when the store cannot be opened.

        options:
          --json    {"store", "schemaFile", "identical", "storedFingerprint", "givenFingerprint", "differences",
                    "migration"} (README.md)
        """

    var options: CommonOptions
    var schemaPath: String
    var schema: Schema

    init(parsing arguments: inout Arguments) throws {
        options = try CommonOptions(parsing: &arguments)
        schemaPath = try arguments.positional("SCHEMA.json")
        schema = try SchemaInput.read(schemaPath)
    }

    func run(_ console: Console) throws -> ExitCode {
        do {
            return try compare(console)
        } catch let error as UsageError {
            throw error
        } catch {
            // 1 means "different" here, as for diff: any other failure that is not "cannot open" is 2.
            let (code, message) = ExitCode.classify(error)
            if code == .cannotOpen { throw error }
            console.message("trellis schema-diff: \(message)")
            return .usage
        }
    }

    private func compare(_ console: Console) throws -> ExitCode {
        let location = try StoreLocation(options.store)
        let stored = try location.reader.schema()
        let diff = SchemaDiff(stored: stored, given: schema)
        // What opening would do, planned against the data (the checks of unique indexes, nulls and counts run).
        var planFailure: String?
        var plan: PlannedMigration?
        do {
            plan = try Store.plannedMigration(directory: location.url, schema: schema)
        } catch {
            planFailure = ExitCode.classify(error).1
        }
        let identical = diff.changes.isEmpty
        if options.json {
            console.line(
                JSON.object([
                    ("store", .string(location.url.path)), ("schemaFile", .string(schemaPath)),
                    ("identical", .bool(identical)),
                    ("storedFingerprint", .string(StoreFileName.hex16(stored.fingerprint))),
                    ("givenFingerprint", .string(StoreFileName.hex16(schema.fingerprint))),
                    ("differences", .array(diff.changes.map(\.json))), ("migration", plan.map(Self.json) ?? .null),
                ]).rendered())
        } else {
            console.line("--- \(location.url.path) (schema \(StoreFileName.hex16(stored.fingerprint)))")
            console.line("+++ \(schemaPath) (schema \(StoreFileName.hex16(schema.fingerprint)))")
            for change in diff.changes { console.line(change.text) }
            if identical { console.line("no differences") }
            if let plan { for line in Self.verdict(plan, defaultsOnly: !identical) { console.line(line) } }
        }
        if let planFailure {
            console.message("trellis schema-diff: cannot tell what opening the store would do: \(planFailure)")
            return .usage
        }
        return identical ? .ok : .failed
    }

    /// What opening the store with the schema would do, in words.
    static func verdict(_ plan: PlannedMigration, defaultsOnly: Bool) -> [String] {
        guard plan.canRun else {
            let n = plan.problems.count
            return [
                "migration: refused: opening the store with this schema would throw migrationRefused and change "
                    + "nothing (\(n) problem\(n == 1 ? "" : "s")):"
            ] + plan.problems.map { "  \($0)" }
        }
        guard plan.isNeeded else {
            return [
                "migration: none: the store opens with this schema as it is"
                    + (defaultsOnly ? " (default values are not part of its structure; the store keeps its own)" : "")
            ]
        }
        let n = plan.steps.count
        return [
            "migration: lightweight: opening the store with this schema runs \(n) step\(n == 1 ? "" : "s") in one "
                + "atomic record, losing nothing and keeping every object ID:"
        ] + plan.steps.map { "  \($0)" }
    }

    /// `{"needed", "canRun", "lightweight", "steps", "problems"}`; `lightweight` is true when a migration is needed
    /// and can run.
    static func json(_ plan: PlannedMigration) -> JSON {
        .object([
            ("needed", .bool(plan.isNeeded)), ("canRun", .bool(plan.canRun)),
            ("lightweight", .bool(plan.isNeeded && plan.canRun)),
            ("steps", .array(plan.steps.map(MigrationFormat.stepJSON))),
            ("problems", .array(plan.problems.map { .string($0) })),
        ])
    }
}

import Foundation
import Trellis

/// `trellis migrate STORE --to SCHEMA.json [--dry-run]`: plans, and unless it is a dry run commits, the migration of a
/// store to a new schema, the way opening it with that schema in an app would.
struct MigrateCommand: Command {
    static let name = "migrate"
    static let summary = "plan (--dry-run) or run the migration of a store to the schema in a JSON file"
    static let help = """
        usage: trellis migrate STORE --to SCHEMA.json [--dry-run] [--json]

        Migrates the store in directory STORE to the schema in SCHEMA.json, as opening the store with that schema
        in an app would: entities, attributes and relationships are matched by name (or by `originalName`, for a
        rename), and every change that loses nothing (add, remove or rename entities, attributes and relationships;
        optionality; widened numbers; delete rules; counts the data meets; indexes, unique ones checked against the
        data) is committed as one atomic migration record that keeps every object ID. Anything else is refused with
        each offending change or object named, and nothing is written.

        SCHEMA.json is a schema as `trellis info --json` prints it under "schema" (a whole `info --json` document
        is accepted too), plus an optional "originalName" on entities, attributes and relationships: the name it
        has in the store. "fingerprint" is ignored. Tools/trellis/README.md describes every field.

        With --dry-run it prints the steps it would run, each with the number of objects it touches, or the
        problems that refuse it, and writes nothing (it takes no lock, so it can run beside a live writer).
        Without it, it opens the store for writing (a writer must not hold it), migrates, and prints what was done.

        Exits 0 when the migration ran, would run (--dry-run), or is not needed; 1 when it is refused or the store
        is damaged (nothing was changed); 2 when SCHEMA.json cannot be read or is not a schema (the message names
        the field); 3 when the store cannot be opened or a writer holds it.

        options:
          --to SCHEMA.json   the schema to migrate to
          --dry-run          plan only: print the steps and their costs, or the problems; write nothing
          --json             {"store", "dryRun", "needed", "canRun", "fromFingerprint", "toFingerprint", "steps",
                             "problems", "migrated", "sequence"} (README.md)
        """

    var options: CommonOptions
    var schemaPath: String
    var schema: Schema
    var dryRun: Bool

    init(parsing arguments: inout Arguments) throws {
        guard let path = try arguments.value("--to") else { throw UsageError("missing --to SCHEMA.json") }
        schemaPath = path
        dryRun = arguments.flag("--dry-run")
        options = try CommonOptions(parsing: &arguments)
        // Read before the store is touched: a schema that does not parse is a usage error (exit 2).
        schema = try SchemaInput.read(path)
    }

    func run(_ console: Console) throws -> ExitCode {
        let location = try StoreLocation(options.store)
        let strict = StoreOptions(recovery: .strict, compaction: .manual)
        let plan: PlannedMigration
        do {
            plan = try Store.plannedMigration(directory: location.url, schema: schema, options: strict)
        } catch let error as TrellisError where error.code == .corrupt {
            throw CommandFailure(
                "cannot migrate \(options.store): the store is damaged (\(error.message)). "
                    + "Run `trellis verify`, then `trellis repair`; nothing was changed")
        }
        var report = Report(store: location.url.path, dryRun: dryRun, plan: plan)
        guard plan.canRun else {
            report.print(console, json: options.json)
            console.message(
                "trellis migrate: refused (\(plan.problems.count) problem\(plan.problems.count == 1 ? "" : "s")); "
                    + "nothing was changed")
            return .failed
        }
        guard plan.isNeeded, !dryRun else {
            report.print(console, json: options.json)
            return .ok
        }
        let store: Store
        do {
            store = try Store(directory: location.url, schema: schema, options: strict)
        } catch let error as TrellisError where error.code == .locked {
            throw CannotOpen(
                "cannot migrate \(options.store): another process holds it open for writing (\(error.message)). "
                    + "Close it first, or let the app open the store with the new schema")
        } catch let error as TrellisError where error.code == .corrupt {
            throw CommandFailure(
                "cannot migrate \(options.store): the store is damaged (\(error.message)). "
                    + "Run `trellis verify`, then `trellis repair`; nothing was changed")
        } catch let error as TrellisError where error.code == .migrationRefused {
            // The store changed between the plan and the open (a writer committed meanwhile).
            throw CommandFailure(error.message)
        }
        let done = store.schema.history.last
        do {
            try store.close()
        } catch {
            throw CommandFailure("the migration was committed, but closing the store failed: \(error)")
        }
        report.migration = done
        report.print(console, json: options.json)
        return .ok
    }

    /// What `migrate` prints: the plan, and what was done.
    struct Report {
        var store: String
        var dryRun: Bool
        var plan: PlannedMigration
        /// The history entry of the migration that ran; nil when none did.
        var migration: SchemaMigration?

        func print(_ console: Console, json: Bool) {
            if json {
                console.line(self.json.rendered())
            } else {
                for line in lines { console.line(line) }
            }
        }

        var lines: [String] {
            let from = StoreFileName.hex16(plan.fromFingerprint)
            let to = StoreFileName.hex16(plan.toFingerprint)
            guard plan.canRun else {
                var out = [
                    "refused: \(store) cannot be migrated from schema \(from) to \(to); nothing was changed:"
                ]
                out += plan.problems.map { "  \($0)" }
                return out
            }
            guard plan.isNeeded else {
                return [
                    "nothing to migrate: \(store) already has this schema's structure (fingerprint \(from)); "
                        + "default values are not part of it"
                ]
            }
            var out: [String] = []
            if let migration {
                out.append(
                    "migrated \(store) from schema \(MigrationFormat.change(migration)) at sequence "
                        + "\(migration.sequence), in one record:")
            } else {
                out.append("dry run: \(store) would migrate from schema \(from) to \(to); nothing was written:")
            }
            out += plan.steps.map { "  \($0)" }
            let touched = plan.steps.map(\.objects).max() ?? 0
            out.append(
                "\(plan.steps.count) step\(plan.steps.count == 1 ? "" : "s"); the largest touches \(touched) "
                    + "object\(touched == 1 ? "" : "s")")
            return out
        }

        var json: JSON {
            .object([
                ("store", .string(store)), ("dryRun", .bool(dryRun)), ("needed", .bool(plan.isNeeded)),
                ("canRun", .bool(plan.canRun)),
                ("fromFingerprint", .string(StoreFileName.hex16(plan.fromFingerprint))),
                ("toFingerprint", .string(StoreFileName.hex16(plan.toFingerprint))),
                ("steps", .array(plan.steps.map(MigrationFormat.stepJSON))),
                ("problems", .array(plan.problems.map { .string($0) })),
                ("migrated", .bool(migration != nil)), ("sequence", migration.map { .int($0.sequence) } ?? .null),
            ])
        }
    }
}

import Foundation
import TrellisCore
import TrellisGraph
import TrellisJournal

/// Runs a migration in memory: finds the version a recovered graph holds, plans each stage from there to the plan's
/// last version, moves the graph through them (running custom stages' code), checks the data against the new
/// constraints, and describes the whole as one journal record. Nothing here writes; the opener commits the result.
enum SchemaMigrator {
    struct Outcome {
        /// The graph in the plan's last schema (aligned to the stored one), its history carried along.
        var graph: Graph
        /// The record to commit; nil when the store already has the schema's structure.
        var record: MigrationRecord?
        var steps: [MigrationStep]
        var problems: [String]
        /// How the stored schema and the plan's differ: the refused stage's differences when it is refused, else
        /// every stage's.
        var differences: [SchemaDifference] = []
    }

    /// - Parameter collectingProblems: a dry run returns refusals in `problems` instead of throwing them.
    static func run(_ graph: Graph, plan: ResolvedMigrationPlan, collectingProblems: Bool = false) throws -> Outcome {
        let stored = graph.schema
        var candidates: [Int] = []
        var aligned: [Int: Schema] = [:]
        for (i, version) in plan.versions.enumerated() {
            let stage = try MigrationPlanner.plan(from: stored, to: version.schema, counts: counts(graph))
            if !stage.isNeeded && stage.schema.fingerprint == stored.fingerprint {
                candidates.append(i)
                aligned[i] = stage.schema
            }
        }
        // Two versions of the same structure (a stage that only moves data): the history says which one the store
        // holds.
        let recorded = stored.history.last?.toVersion
        let start = candidates.first { plan.versions[$0].identifier == recorded } ?? candidates.last
        if let start, start == plan.versions.count - 1, let same = aligned[start] {
            return Outcome(
                graph: graph.withSchema(same.withHistory(stored.history)), record: nil, steps: [], problems: [])
        }
        // From the store's version through every later one; a store that matches no version is inferred straight to
        // the last.
        let path: [(from: String?, to: Int)] =
            start.map { s in (s..<plan.versions.count - 1).map { (plan.versions[$0].identifier, $0 + 1) } }
            ?? [(nil, plan.versions.count - 1)]

        var current = graph
        var stages: [MigrationRecord.Stage] = []
        var steps: [MigrationStep] = []
        var problems: [String] = []
        var differences: [SchemaDifference] = []
        var duplicate: (TrellisError.UniqueViolation, ObjectID)?
        for (from, to) in path {
            let version = plan.versions[to]
            let code = from == nil ? nil : plan.code[to - 1]
            let label = from.map { "\($0) → \(version.identifier): " } ?? ""
            let planned = try MigrationPlanner.plan(
                from: current.schema, to: version.schema, counts: counts(current), replacesLossyTypes: code != nil)
            problems += planned.problems.map { label + $0 }
            guard problems.isEmpty else {
                differences = planned.differences
                break
            }
            var next = current.migrated(to: planned.schema, mapping: planned.mapping)
            var changes: ChangeSet?
            if let code {
                var numbers: [UInt32: UInt32] = [:]
                for (t, map) in planned.mapping.entities.enumerated() {
                    if let s = map.source, !planned.schema.entities[t].isRetired { numbers[UInt32(s)] = UInt32(t) }
                }
                var context = MigrationContext(
                    old: current,
                    transaction: Transaction(
                        schema: planned.schema, allocator: SerialAllocator(after: next.maxSerials)),
                    entityNumbers: numbers)
                try code(&context)
                if !context.transaction.isEmpty {
                    let (resolved, resolvedChanges) = try CommitResolver.resolve(context.transaction, on: next)
                    next = resolved
                    changes = resolvedChanges
                }
            }
            let violations = next.violations(of: planned.checks)
            problems += violations.map { label + $0.text }
            guard problems.isEmpty else {
                differences = planned.differences
                // Each difference whose check failed is refused by the first object that breaks it.
                for v in violations {
                    let d = planned.checkDifferences[v.check]
                    differences[d] = differences[d].refused(v.text)
                }
                if let v = violations.first(where: { $0.duplicate != nil }), let pair = v.duplicate,
                    case .unique(let e, let i) = planned.checks[v.check]
                {
                    let layout = next.schema.layouts[e]
                    let violation = TrellisError.UniqueViolation(
                        entity: layout.name, attributes: layout.indexes[i].columns.map { layout.attributes[$0].name },
                        values: pair.values, existing: pair.existing)
                    duplicate = (violation, pair.object)
                }
                break
            }
            differences += planned.differences
            steps += planned.steps
            if code != nil && planned.steps.isEmpty {
                steps.append(
                    MigrationStep(
                        .replaceAttribute, entity: "*", detail: "custom code of \(label.dropLast(2))",
                        objects: current.objectCount))
            }
            stages.append(
                MigrationRecord.Stage(
                    fromVersion: from, toVersion: version.identifier.isEmpty ? nil : version.identifier,
                    schema: planned.schema, mapping: planned.mapping, changes: changes))
            current = next
        }
        if !problems.isEmpty {
            if collectingProblems {
                return Outcome(
                    graph: graph, record: nil, steps: steps, problems: problems, differences: differences)
            }
            throw refusal(
                problems, stored: stored, given: plan.target, differences: differences, duplicate: duplicate)
        }
        let record = MigrationRecord(
            from: stored.fingerprint, to: current.schema.fingerprint, steps: steps.map(\.description), stages: stages)
        let sequence = graph.sequence + 1
        let history = stored.history + [record.summary(sequence: sequence, date: Date())]
        current = current.withSchema(current.schema.withHistory(history))
        current.sequence = sequence
        return Outcome(graph: current, record: record, steps: steps, problems: [], differences: differences)
    }

    static func counts(_ graph: Graph) -> [Int] {
        (0..<graph.schema.entities.count).map { graph.count(entity: UInt32($0)) }
    }

    /// The error of a refused migration: the problems, then how the schemas differ, in the message and as fields.
    static func refusal(
        _ problems: [String], stored: Schema, given: Schema, differences: [SchemaDifference],
        duplicate: (TrellisError.UniqueViolation, ObjectID)?
    ) -> TrellisError {
        let listed =
            differences.isEmpty
            ? "" : "\nhow the schemas differ:\n  " + differences.map(\.description).joined(separator: "\n  ")
        return TrellisError(
            .migrationRefused,
            "the store's schema (\(JournalFormat.hex16(stored.fingerprint))) cannot be migrated to this one "
                + "(\(JournalFormat.hex16(given.fingerprint))); nothing was changed:\n  "
                + problems.joined(separator: "\n  ") + listed, object: duplicate?.1, uniqueViolation: duplicate?.0,
            schemaDifferences: differences)
    }
}

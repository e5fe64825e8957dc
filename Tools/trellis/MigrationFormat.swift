import Foundation
import Trellis

/// Schema migrations in words and JSON: the history `info` prints, the migration records of `dump` and `history`, and
/// the steps `migrate` plans.
enum MigrationFormat {
    /// `0123456789abcdef (1.0.0)`: a schema's fingerprint, with its plan version when it has one.
    static func schemaName(_ fingerprint: UInt64, _ version: String?) -> String {
        StoreFileName.hex16(fingerprint) + (version.map { " (\($0))" } ?? "")
    }

    /// `0123… (1.0.0) → fedc… (2.0.0)`
    static func change(_ m: SchemaMigration) -> String {
        schemaName(m.fromFingerprint, m.fromVersion) + " → " + schemaName(m.toFingerprint, m.toVersion)
    }

    /// The `migrations` block of `info`: the chain of schemas, then each migration with its steps.
    static func historyLines(_ schema: Schema) -> [String] {
        let history = schema.history
        guard let first = history.first else {
            return ["migrations  none: the store has had its schema since it was created"]
        }
        let chain =
            [schemaName(first.fromFingerprint, first.fromVersion)]
            + history.map { schemaName($0.toFingerprint, $0.toVersion) }
        var out = ["migrations  \(history.count); schema versions \(chain.joined(separator: " → "))"]
        for m in history {
            out.append("  #\(m.sequence)  \(ValueFormat.timestamp(m.date))  \(change(m))")
            for step in m.steps { out.append("      \(step)") }
        }
        return out
    }

    /// `{"sequence", "time", "fromFingerprint", "toFingerprint", "fromVersion", "toVersion", "steps"}`
    static func json(_ m: SchemaMigration) -> JSON {
        .object([
            ("sequence", .int(m.sequence)), ("time", .string(ValueFormat.timestamp(m.date))),
            ("fromFingerprint", .string(StoreFileName.hex16(m.fromFingerprint))),
            ("toFingerprint", .string(StoreFileName.hex16(m.toFingerprint))),
            ("fromVersion", m.fromVersion.map { .string($0) } ?? .null),
            ("toVersion", m.toVersion.map { .string($0) } ?? .null),
            ("steps", .array(m.steps.map { .string($0) })),
        ])
    }

    /// The rows of a migration record in `dump`: what changed, then one row per step.
    static func rows(_ migration: JournalMigration) -> [String] {
        ["    migrate schema \(change(migration.summary))"] + migration.summary.steps.map { "    step    \($0)" }
    }

    /// A planned step in `migrate --json`: `{"kind", "entity", "property", "detail", "objects"}`.
    static func stepJSON(_ step: MigrationStep) -> JSON {
        .object([
            ("kind", .string(step.kind.rawValue)), ("entity", .string(step.entity)),
            ("property", step.property.map { .string($0) } ?? .null), ("detail", .string(step.detail)),
            ("objects", .int(step.objects)),
        ])
    }
}

/// The schemas a journal's records were written in, one per span between the migrations it holds (span 0 starts at
/// the checkpoint), and how an object or entity named in the newest schema was numbered in each: entity numbers close
/// up when an entity before them is removed, and a renamed entity keeps its number under a new name.
struct SchemaEpochs {
    let migrations: [JournalMigration]
    /// The schema of each span, oldest first; the last is the store's newest.
    let schemas: [Schema]

    init(_ reader: JournalReader, newest: Schema) {
        migrations = (try? reader.migrations()) ?? []
        if let first = migrations.first {
            schemas = [first.schemaBefore] + migrations.map(\.schemaAfter)
        } else {
            schemas = [newest]
        }
    }

    /// The span a record with sequence number `sequence` belongs to (a migration record opens its span).
    func span(of sequence: UInt64) -> Int { migrations.filter { $0.summary.sequence <= sequence }.count }

    /// The object `text` (`Entity#serial`) in every span; nil where it has no entity. It is read in the newest
    /// schema that names its entity, so an object of a removed entity can be named too.
    func ids(_ text: String) throws -> [ObjectID?] {
        for span in schemas.indices.reversed() {
            if let id = try? ObjectName.parse(text, schemas[span]) { return spread(id, from: span) }
        }
        // The newest schema's message: it lists the entities there are now.
        _ = try ObjectName.parse(text, schemas[schemas.count - 1])
        throw UsageError("'\(text)' names no object")
    }

    /// The entity named `name` in every span, as an ID of serial 1 (nil where it does not exist).
    func entity(_ name: String) throws -> [ObjectID?] {
        guard let span = schemas.indices.reversed().first(where: { (try? schemas[$0].entityNumber(name)) != nil })
        else {
            throw UsageError(
                "the store has no entity '\(name)' (it has: \(ObjectName.entityNames(schemas[schemas.count - 1])))")
        }
        return spread(ObjectID(entity: try schemas[span].entityNumber(name), serial: 1), from: span)
    }

    /// `id` of span `span` followed back and forth through the migrations.
    private func spread(_ id: ObjectID, from span: Int) -> [ObjectID?] {
        var out = [ObjectID?](repeating: nil, count: schemas.count)
        out[span] = id
        for s in stride(from: span - 1, through: 0, by: -1) { out[s] = out[s + 1].flatMap(migrations[s].idBefore) }
        for s in (span + 1)..<max(span + 1, schemas.count) { out[s] = out[s - 1].flatMap(migrations[s - 1].idAfter) }
        return out
    }
}

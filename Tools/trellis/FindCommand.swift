import Foundation
import Trellis

/// `trellis find STORE ENTITY --where CONDITION`: the objects that match a condition, fetched by the library's
/// planner (`DynamicQuery`) from the store as an app opening it would see it.
struct FindCommand: Command {
    static let name = "find"
    static let summary = "the objects of an entity that match a condition (--where), planned with the store's indexes"
    static let help = #"""
        usage: trellis find STORE ENTITY [--where CONDITION] [--sort KEYS] [--limit N] [--offset N] [--explain] [--json]

        Prints the objects of entity ENTITY that match CONDITION, one per line with its values and its non-empty
        relationships, then how many matched. The store is read as opening it would recover it, read-only: no lock
        is taken and nothing is written. The query is planned and run by the library (a DynamicQuery, with the
        store's indexes); --explain prints the plan instead of the objects.

        CONDITION compares attributes with values, e.g. 'title == "Buy milk" && (stars >= 3 || due == null)':
          comparisons   == != < <= > >=, and NAME in [v, …] or NAME not in [v, …]
          combined by   && (or: and), || (or: or), ! (or: not), parentheses
          NAME          an attribute, or a path through to-one relationships: folder.name
          values        "text" or 'text' (escapes \" \' \\ \n \r \t \0 \u{e9}), 42, -2.5, 1e3, true, false,
                        null (or nil), a UUID, 0x48656c6c6f (bytes)
        A value is converted to its attribute's type as an insert would; text is read as a date (ISO 8601:
        "2026-11-29", "2026-11-29T11:30:00Z", "2026-11-29T12:30:00+01:00"), UUID, URL, decimal or base64 bytes
        where the attribute is one. A condition that does not parse, or names an entity or attribute the store
        lacks, is a usage error (exit 2) that points at the column.

        options:
          --where CONDITION   which objects (default: every object of ENTITY)
          --sort KEYS         ATTRIBUTE, ATTRIBUTE:asc or ATTRIBUTE:desc, comma-separated (default: object ID)
          --limit N           at most N objects
          --offset N          skip the first N matches
          --explain           print the plan (index, bounds, candidates) instead of the objects
          --json              {"store", "sequence", "entity", "where", "plan", "matches", "objects"} (README.md)
        """#

    var options: CommonOptions
    var entity: String
    var condition: String?
    var syntax: ConditionSyntax?
    var sort: [DynamicQuery.Sort]
    var limit: Int?
    var offset: Int?
    var explain: Bool

    init(parsing arguments: inout Arguments) throws {
        condition = try arguments.value("--where")
        let keys = try arguments.value("--sort")
        limit = try arguments.number("--limit", as: Int.self)
        offset = try arguments.number("--offset", as: Int.self)
        explain = arguments.flag("--explain")
        options = try CommonOptions(parsing: &arguments)
        entity = try arguments.positional("ENTITY")
        sort = try keys.map(Self.sortKeys) ?? []
        // Syntax is checked before the store is touched; names and types once its schema is read.
        if let condition {
            do {
                syntax = try ConditionParser.parse(condition)
            } catch {
                throw UsageError(error.rendered(condition))
            }
        }
    }

    /// `stars:desc,title` → [stars descending, title ascending].
    static func sortKeys(_ text: String) throws -> [DynamicQuery.Sort] {
        try text.split(separator: ",", omittingEmptySubsequences: false).map { key in
            let parts = key.trimmingCharacters(in: .whitespaces).split(separator: ":", omittingEmptySubsequences: false)
            guard let name = parts.first, !name.isEmpty, parts.count <= 2 else {
                throw UsageError("--sort takes ATTRIBUTE[:asc|:desc] keys separated by commas, not '\(text)'")
            }
            switch parts.count == 2 ? parts[1].lowercased() : "asc" {
            case "asc": return DynamicQuery.Sort(String(name))
            case "desc": return DynamicQuery.Sort(String(name), ascending: false)
            default: throw UsageError("--sort: '\(parts[1])' in '\(key)' is neither asc nor desc")
            }
        }
    }

    func run(_ console: Console) throws -> ExitCode {
        let location = try StoreLocation(options.store)
        // Opened as an app would open it, read-only: recovery rebuilds the current state, nothing is written.
        let store = try Store(
            directory: location.url, schema: try location.reader.schema(), options: StoreOptions(readOnly: true))
        defer { try? store.close() }
        let snapshot = store.snapshot
        let schema = snapshot.schema
        guard let number = try? schema.entityNumber(entity) else {
            throw UsageError("the store has no entity '\(entity)' (it has: \(ObjectName.entityNames(schema)))")
        }
        let description = schema.entities[Int(number)]
        var typed: DynamicQuery.Condition?
        if let syntax, let condition {
            do {
                typed = try ConditionTyping(schema: schema, entity: description).condition(syntax)
            } catch {
                throw UsageError(error.rendered(condition))
            }
        }
        for key in sort where !description.attributes.contains(where: { $0.name == key.name }) {
            if key.name.contains(".") {
                throw UsageError("--sort: '\(key.name)' is a path; sort by an attribute of \(entity) itself")
            }
            throw UsageError(
                "--sort: \(entity) has no attribute '\(key.name)' (its attributes: "
                    + "\(description.attributes.map(\.name).joined(separator: ", ")))")
        }
        let query = DynamicQuery(entity, where: typed, sortBy: sort, limit: limit, offset: offset)
        let plan = try snapshot.explain(query)
        var head: [(String, JSON)] = [
            ("store", .string(location.url.path)), ("sequence", .int(snapshot.sequence)), ("entity", .string(entity)),
            ("where", condition.map { .string($0) } ?? .null), ("plan", Self.planJSON(plan)),
        ]
        if explain {
            if options.json { console.line(JSON.object(head).rendered()) } else { console.line("plan: \(plan)") }
            return report(store, console)
        }
        let ids = try snapshot.fetch(query)
        // The matches before --limit and --offset: a count, which the planner answers without reading objects.
        let matches = limit == nil && offset == nil ? ids.count : try snapshot.count(DynamicQuery(entity, where: typed))
        let format = ChangeFormat(schema: schema)
        let rows = ids.compactMap { snapshot.object($0) }
        if options.json {
            head += [("matches", .int(matches)), ("objects", .array(rows.map(format.objectJSON)))]
            console.line(JSON.object(head).rendered())
        } else {
            for row in rows { console.line(Self.line(row, format)) }
            let total = snapshot.count(entity: try schema.entity(entity))
            var summary = "\(matches) of \(total) \(entity) object\(total == 1 ? "" : "s") match"
            if rows.count != matches { summary += "; \(rows.count) shown" }
            console.line(summary + " (as of sequence \(snapshot.sequence))")
        }
        return report(store, console)
    }

    /// `Note#2  title="renamed", stars=2; folder → [Folder#1]`: values as `dump` shows them, then the non-empty
    /// relationships, a long to-many one cut after five targets.
    static func line(_ row: Row, _ format: ChangeFormat) -> String {
        var text = format.object(row.id) + "  " + format.values(row.id.entity, row.values)
        for (name, targets) in format.links(row) where !targets.isEmpty {
            var shown = targets.prefix(5).map(format.object).joined(separator: ", ")
            if targets.count > 5 { shown += ", … \(targets.count) in all" }
            text += "; \(name) → [\(shown)]"
        }
        return text
    }

    static func planJSON(_ plan: QueryPlan) -> JSON {
        .object([
            ("description", .string(plan.description)), ("access", .string("\(plan.access)")),
            ("index", plan.index.map { .array($0.map { .string($0) }) } ?? .null),
            ("bounds", .array(plan.bounds.map { .string($0) })), ("candidates", .int(plan.candidates)),
            ("filters", .bool(plan.filters)), ("sortedByIndex", .bool(plan.sortedByIndex)),
        ])
    }

    /// Damage the read-only recovery met: the objects shown are those before it, and the exit status is 1, as for
    /// the other read commands.
    private func report(_ store: Store, _ console: Console) -> ExitCode {
        guard let report = store.recoveryReport else { return .ok }
        let problems = [report.tornTail, report.hole].compactMap { $0 } + report.skipped
        for p in problems { console.message("damage: \(p) — the objects shown are those recovery keeps") }
        return problems.isEmpty ? .ok : .failed
    }
}

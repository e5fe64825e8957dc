import Foundation
import Trellis

/// How a schema differs from a store's, for `schema-diff`: entities, attributes, relationships and indexes added,
/// removed, renamed or changed. Items are matched as a migration matches them: by name, or, when the store has no
/// such name, by `originalName`. Order is no difference (a migration keeps stored positions), defaults are (though
/// they are no structure: a store keeps its own).
///
/// ```swift
/// let diff = SchemaDiff(stored: try reader.schema(), given: try SchemaInput.read("v2.json"))
/// for change in diff.changes { print(change.text) }   // "+ attribute Note.pinned: Bool = false"
/// ```
struct SchemaDiff {
    /// One difference.
    struct Change {
        enum Kind: String {
            case added, removed, renamed, changed
        }

        var kind: Kind
        /// `entity`, `attribute`, `relationship` or `index`.
        var item: String
        /// The entity's name in the given schema (its stored name when it is removed).
        var entity: String
        /// The attribute's or relationship's name (given; stored when removed), an index's attributes as
        /// `(a, b)`; nil for an entity.
        var name: String?
        /// What changed, for `changed` (`type`, `optional`, `default`, `target`, `inverse`, `toMany`, `deleteRule`,
        /// `count`, `unique`); `name` for `renamed`; nil otherwise.
        var field: String?
        /// The field's value in the store and in the given schema, as text (for `renamed`, the old and new names;
        /// for `added` and `removed`, the item: an attribute's type, a relationship's target, `unique`).
        var stored: String?
        var given: String?

        /// `+ attribute Note.pinned: Bool = false`, `~ attribute Note.stars: type Int → Int64`, `+ index Note (key):
        /// unique`.
        var text: String {
            let mark = ["added": "+", "removed": "-"][kind.rawValue] ?? "~"
            var subject = "\(item) \(entity)"
            if let name { subject += item == "index" ? " \(name)" : ".\(name)" }
            switch kind {
            case .added: return "\(mark) \(subject)\(given.map { ": \($0)" } ?? "")"
            case .removed: return "\(mark) \(subject)\(stored.map { ": \($0)" } ?? "")"
            case .renamed: return "\(mark) \(subject): renamed from '\(stored ?? "")'"
            case .changed:
                // `optional → required` and `to-one → to-many` say what they are; other fields are named.
                let label = ["deleteRule": "delete rule ", "toMany": "", "optional": "", "unique": ""][field ?? ""]
                return "\(mark) \(subject): \(label ?? (field ?? "") + " ")\(stored ?? "none") → \(given ?? "none")"
            }
        }

        var json: JSON {
            func text(_ s: String?) -> JSON { s.map { .string($0) } ?? .null }
            return .object([
                ("change", .string(kind.rawValue)), ("item", .string(item)), ("entity", .string(entity)),
                ("name", text(name)), ("field", text(field)), ("stored", text(stored)), ("given", text(given)),
                ("text", .string(self.text)),
            ])
        }
    }

    private(set) var changes: [Change] = []

    init(stored: Schema, given: Schema) {
        // A store keeps a removed entity as a placeholder (its objects' numbers stay); it is no entity to compare.
        let old = stored.entities.filter { !$0.isRetired }
        let new = given.entities
        let entityMatch = Self.match(new.map(\.name), new.map(\.originalName), old.map(\.name))
        // Stored entity name → given name, to compare relationship targets across an entity's rename.
        var renamedEntity: [String: String] = [:]
        for (g, s) in entityMatch.enumerated() { if let s { renamedEntity[old[s].name] = new[g].name } }
        // Stored "Entity.relationship" → its given name, to compare inverses across renames.
        var renamedRelationship: [String: String] = [:]
        for (g, s) in entityMatch.enumerated() {
            guard let s else { continue }
            let rs = new[g].relationships
            let match = Self.match(rs.map(\.name), rs.map(\.originalName), old[s].relationships.map(\.name))
            for (r, source) in match.enumerated() {
                if let source {
                    renamedRelationship[old[s].name + "." + old[s].relationships[source].name] = rs[r].name
                }
            }
        }
        for (s, entity) in old.enumerated() {
            guard let g = entityMatch.firstIndex(of: s) else {
                changes.append(Change(kind: .removed, item: "entity", entity: entity.name))
                continue
            }
            compare(entity, new[g], renamedEntity, renamedRelationship)
        }
        for (g, entity) in new.enumerated() where entityMatch[g] == nil {
            changes.append(Change(kind: .added, item: "entity", entity: entity.name))
            for a in entity.attributes {
                changes.append(
                    Change(kind: .added, item: "attribute", entity: entity.name, name: a.name, given: Self.describe(a)))
            }
            for r in entity.relationships {
                changes.append(
                    Change(
                        kind: .added, item: "relationship", entity: entity.name, name: r.name,
                        given: Self.describe(r)))
            }
            for index in entity.indexes {
                changes.append(
                    Change(
                        kind: .added, item: "index", entity: entity.name, name: Self.describe(index.attributes),
                        given: index.isUnique ? "unique" : nil))
            }
        }
    }

    /// Matches names as a migration does: by name when the stored side has it, else by original name; each stored
    /// item at most once. The stored position of each given item, or nil for a new one.
    static func match(_ names: [String], _ originals: [String?], _ stored: [String]) -> [Int?] {
        var out = [Int?](repeating: nil, count: names.count)
        var taken = Set<Int>()
        for (i, name) in names.enumerated() {
            if let p = stored.firstIndex(of: name), !taken.contains(p) {
                out[i] = p
                taken.insert(p)
            }
        }
        for (i, original) in originals.enumerated() where out[i] == nil && !stored.contains(names[i]) {
            if let original, let p = stored.firstIndex(of: original), !taken.contains(p) {
                out[i] = p
                taken.insert(p)
            }
        }
        return out
    }

    private mutating func compare(
        _ old: EntityDescription, _ new: EntityDescription, _ renamedEntity: [String: String],
        _ renamedRelationship: [String: String]
    ) {
        let entity = new.name
        if old.name != new.name {
            changes.append(
                Change(kind: .renamed, item: "entity", entity: entity, field: "name", stored: old.name, given: entity))
        }
        func changed(_ item: String, _ name: String, _ field: String, _ stored: String?, _ given: String?) {
            guard stored != given else { return }
            changes.append(
                Change(
                    kind: .changed, item: item, entity: entity, name: name, field: field, stored: stored, given: given))
        }

        let attributeMatch = Self.match(
            new.attributes.map(\.name), new.attributes.map(\.originalName), old.attributes.map(\.name))
        for (g, a) in new.attributes.enumerated() {
            guard let s = attributeMatch[g] else {
                changes.append(
                    Change(kind: .added, item: "attribute", entity: entity, name: a.name, given: Self.describe(a)))
                continue
            }
            let was = old.attributes[s]
            if was.name != a.name {
                changes.append(
                    Change(
                        kind: .renamed, item: "attribute", entity: entity, name: a.name, field: "name",
                        stored: was.name,
                        given: a.name))
            }
            changed("attribute", a.name, "type", was.type.description, a.type.description)
            if was.isOptional != a.isOptional {
                changed(
                    "attribute", a.name, "optional", Self.optionality(was.isOptional), Self.optionality(a.isOptional))
            }
            changed(
                "attribute", a.name, "default", was.defaultValue.map { ValueFormat.text($0) },
                a.defaultValue.map { ValueFormat.text($0) })
        }
        for (s, a) in old.attributes.enumerated() where !attributeMatch.contains(s) {
            changes.append(
                Change(kind: .removed, item: "attribute", entity: entity, name: a.name, stored: Self.describe(a)))
        }

        let relationshipMatch = Self.match(
            new.relationships.map(\.name), new.relationships.map(\.originalName), old.relationships.map(\.name))
        for (g, r) in new.relationships.enumerated() {
            guard let s = relationshipMatch[g] else {
                changes.append(
                    Change(kind: .added, item: "relationship", entity: entity, name: r.name, given: Self.describe(r)))
                continue
            }
            let was = old.relationships[s]
            if was.name != r.name {
                changes.append(
                    Change(
                        kind: .renamed, item: "relationship", entity: entity, name: r.name, field: "name",
                        stored: was.name, given: r.name))
            }
            // Targets and inverses are compared under their new names, so a renamed entity is not a new target.
            let target = renamedEntity[was.target] ?? was.target
            changed("relationship", r.name, "target", target == r.target ? r.target : was.target, r.target)
            let inverse = renamedRelationship[was.target + "." + was.inverse] ?? was.inverse
            changed("relationship", r.name, "inverse", inverse == r.inverse ? r.inverse : was.inverse, r.inverse)
            changed("relationship", r.name, "toMany", Self.arity(was.isToMany), Self.arity(r.isToMany))
            changed("relationship", r.name, "deleteRule", was.deleteRule.description, r.deleteRule.description)
            changed("relationship", r.name, "count", Self.count(was), Self.count(r))
        }
        for (s, r) in old.relationships.enumerated() where !relationshipMatch.contains(s) {
            changes.append(
                Change(kind: .removed, item: "relationship", entity: entity, name: r.name, stored: Self.describe(r)))
        }

        // Indexes are compared by their attributes' new names; one on the same attributes that only turns unique
        // (or stops being unique) is a change of `unique`.
        var renamedAttribute: [String: String] = [:]
        for (g, s) in attributeMatch.enumerated() {
            if let s { renamedAttribute[old.attributes[s].name] = new.attributes[g].name }
        }
        var storedIndexes = old.indexes.map {
            IndexDescription($0.attributes.map { renamedAttribute[$0] ?? $0 }, unique: $0.isUnique)
        }
        var added: [IndexDescription] = []
        for index in new.indexes {
            if let s = storedIndexes.firstIndex(of: index) { storedIndexes.remove(at: s) } else { added.append(index) }
        }
        for index in added {
            let name = Self.describe(index.attributes)
            if let s = storedIndexes.firstIndex(where: { $0.attributes == index.attributes }) {
                storedIndexes.remove(at: s)
                changed("index", name, "unique", Self.uniqueness(!index.isUnique), Self.uniqueness(index.isUnique))
            } else {
                changes.append(
                    Change(
                        kind: .added, item: "index", entity: entity, name: name, given: index.isUnique ? "unique" : nil)
                )
            }
        }
        for index in storedIndexes {
            changes.append(
                Change(
                    kind: .removed, item: "index", entity: entity, name: Self.describe(index.attributes),
                    stored: index.isUnique ? "unique" : nil))
        }
    }

    static func describe(_ a: AttributeDescription) -> String {
        "\(a.type)\(a.isOptional ? "?" : "")" + (a.defaultValue.map { " = \(ValueFormat.text($0))" } ?? "")
    }

    /// `[Note] (inverse folder, delete rule cascade)`, with `count 1…3` when it has bounds.
    static func describe(_ r: RelationshipDescription) -> String {
        let bounds = r.minCount > 0 || r.maxCount != nil ? ", count \(count(r))" : ""
        return "\(r.isToMany ? "[\(r.target)]" : r.target) (inverse \(r.inverse), delete rule \(r.deleteRule)\(bounds))"
    }

    static func describe(_ attributes: [String]) -> String { "(\(attributes.joined(separator: ", ")))" }

    private static func optionality(_ optional: Bool) -> String { optional ? "optional" : "required" }
    private static func arity(_ toMany: Bool) -> String { toMany ? "to-many" : "to-one" }
    private static func uniqueness(_ unique: Bool) -> String { unique ? "unique" : "not unique" }
    /// `0…`, `1…3`: the relationship's count bounds.
    static func count(_ r: RelationshipDescription) -> String { "\(r.minCount)…\(r.maxCount.map(String.init) ?? "")" }
}

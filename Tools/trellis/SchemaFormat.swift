import Trellis

/// The schema a store carries, as `info` prints it: readable lines, or JSON.
enum SchemaFormat {
    static func lines(_ schema: Schema) -> [String] {
        var out: [String] = []
        for entity in schema.entities {
            out.append("  \(entity.name)")
            for a in entity.attributes {
                var text = "    \(a.name): \(a.type)\(a.isOptional ? "?" : "")"
                if let value = a.defaultValue { text += " = \(ValueFormat.text(value))" }
                out.append(text)
            }
            for r in entity.relationships {
                let target = r.isToMany ? "[\(r.target)]" : r.target
                var bounds = ""
                if r.minCount > 0 || r.maxCount != nil {
                    bounds = ", count \(r.minCount)…\(r.maxCount.map(String.init) ?? "")"
                }
                out.append("    \(r.name) → \(target) (inverse \(r.inverse), delete rule \(r.deleteRule)\(bounds))")
            }
            for index in entity.indexes {
                let kind = index.isUnique ? "unique" : "index"
                out.append("    \(kind) (\(index.attributes.joined(separator: ", ")))")
            }
        }
        return out
    }

    static func json(_ schema: Schema) -> JSON {
        .object([
            ("fingerprint", .string(StoreFileName.hex16(schema.fingerprint))),
            ("entities", .array(schema.entities.map(entity))),
        ])
    }

    private static func entity(_ entity: EntityDescription) -> JSON {
        .object([
            ("name", .string(entity.name)),
            (
                "attributes",
                .array(
                    entity.attributes.map { a in
                        .object([
                            ("name", .string(a.name)), ("type", .string(a.type.description)),
                            ("optional", .bool(a.isOptional)),
                            ("default", a.defaultValue.map(ValueFormat.json) ?? .null),
                        ])
                    })
            ),
            (
                "relationships",
                .array(
                    entity.relationships.map { r in
                        .object([
                            ("name", .string(r.name)), ("target", .string(r.target)), ("inverse", .string(r.inverse)),
                            ("toMany", .bool(r.isToMany)), ("deleteRule", .string(r.deleteRule.description)),
                            ("minCount", .int(r.minCount)), ("maxCount", r.maxCount.map { .int($0) } ?? .null),
                        ])
                    })
            ),
            (
                "indexes",
                .array(
                    entity.indexes.map { index in
                        .object([
                            ("attributes", .array(index.attributes.map { .string($0) })),
                            ("unique", .bool(index.isUnique)),
                        ])
                    })
            ),
        ])
    }
}

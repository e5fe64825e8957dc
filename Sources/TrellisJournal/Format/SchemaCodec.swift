import TrellisCore
import TrellisGraph

/// The full schema, encoded into every segment and checkpoint header so that a file says what its positions mean
/// (and the `trellis` tool can name attributes) without the application's code.
///
/// Layout: codec version (1 byte, 1), entity count, then per entity: name, attribute count, per attribute (name,
/// type raw value byte, optional byte, has-default byte, default value if any), relationship count, per
/// relationship (name, target, inverse, to-many byte (3: ordered to-many, format version 8), delete rule byte,
/// minimum count, maximum count + 1 or 0 for none), index count, per index (attribute name count, names, unique byte). Strings are varint length + UTF-8.
/// Version 2 (format version 4) adds a flags byte after each entity's name (1: retired, see
/// `EntityDescription.isRetired`) and the migration history after the entities: count, then per migration: sequence
/// (varint), time (zigzag varint microseconds since 1970), from and to fingerprints (8 bytes each), from and to
/// version (strings, empty for none), step count and steps (strings).
package enum SchemaCodec {
    static let version: UInt8 = 2

    package static func encode(_ schema: Schema) -> [UInt8] {
        ByteWriter.bytes { write(schema, into: &$0) }
    }

    private static func write(_ schema: Schema, into w: inout ByteWriter) {
        w.u8(version)
        w.varint(schema.entities.count)
        for e in schema.entities {
            w.string(e.name)
            w.u8(e.isRetired ? 1 : 0)
            w.varint(e.attributes.count)
            for a in e.attributes {
                w.string(a.name)
                w.u8(a.type.rawValue)
                w.u8(a.isOptional ? 1 : 0)
                if let d = a.defaultValue {
                    w.u8(1)
                    w.value(d)
                } else {
                    w.u8(0)
                }
            }
            w.varint(e.relationships.count)
            for r in e.relationships {
                w.string(r.name)
                w.string(r.target)
                w.string(r.inverse)
                w.u8(r.isOrdered ? 3 : r.isToMany ? 1 : 0)
                w.u8(r.deleteRule.rawValue)
                w.varint(r.minCount)
                w.varint(r.maxCount.map { UInt64($0) + 1 } ?? 0)
            }
            w.varint(e.indexes.count)
            for i in e.indexes {
                w.varint(i.attributes.count)
                for name in i.attributes { w.string(name) }
                w.u8(i.isUnique ? 1 : 0)
            }
        }
        w.varint(schema.history.count)
        for m in schema.history {
            w.varint(m.sequence)
            w.signed(RecordFrame.microseconds(m.date))
            w.u64(m.fromFingerprint)
            w.u64(m.toFingerprint)
            w.string(m.fromVersion ?? "")
            w.string(m.toVersion ?? "")
            w.varint(m.steps.count)
            for step in m.steps { w.string(step) }
        }
    }

    package static func decode(_ bytes: [UInt8], context: String) throws -> Schema {
        var r = ByteReader(bytes, context: context + " schema")
        let v = try r.u8()
        guard v == 1 || v == version else { throw r.failure("unknown schema encoding version \(v)") }
        var entities: [EntityDescription] = []
        for _ in 0..<(try r.count()) {
            var entity = EntityDescription(try r.string())
            if v >= 2 {
                let flags = try r.u8()
                guard flags <= 1 else { throw r.failure("entity flags \(flags)") }
                entity.isRetired = flags == 1
            }
            for _ in 0..<(try r.count()) {
                let name = try r.string()
                let rawType = try r.u8()
                guard let type = AttributeType(rawValue: rawType) else { throw r.failure("unknown type \(rawType)") }
                let optional = try r.u8() != 0
                // Value is itself nil-literal convertible, so spell out the Optional: no default is not `.null`.
                var defaultValue: Value? = Optional.none
                if try r.u8() != 0 { defaultValue = try r.value() }
                entity.attributes.append(AttributeDescription(name, type, optional: optional, default: defaultValue))
            }
            for _ in 0..<(try r.count()) {
                let name = try r.string()
                let target = try r.string()
                let inverse = try r.string()
                let cardinality = try r.u8()
                // 3: ordered to-many (format version 8); any other non-zero byte reads as to-many, as before.
                let toMany = cardinality != 0
                let ordered = cardinality == 3
                let rawRule = try r.u8()
                guard let rule = DeleteRule(rawValue: rawRule) else { throw r.failure("unknown delete rule") }
                let minCount = try r.int(limit: Int(Int32.max))
                let maxPlusOne = try r.int(limit: Int(Int32.max))
                var rel = RelationshipDescription(
                    name, to: target, inverse: inverse, toMany: toMany, ordered: ordered, deleteRule: rule)
                rel.minCount = minCount
                rel.maxCount = maxPlusOne == 0 ? nil : maxPlusOne - 1
                entity.relationships.append(rel)
            }
            for _ in 0..<(try r.count()) {
                var names: [String] = []
                for _ in 0..<(try r.count()) { names.append(try r.string()) }
                entity.indexes.append(IndexDescription(names, unique: try r.u8() != 0))
            }
            entities.append(entity)
        }
        var history: [SchemaMigration] = []
        if v >= 2 {
            for _ in 0..<(try r.count()) {
                let sequence = try r.varint()
                let time = try r.signed()
                let from = try r.u64()
                let to = try r.u64()
                let fromVersion = try r.string()
                let toVersion = try r.string()
                var steps: [String] = []
                for _ in 0..<(try r.count()) { steps.append(try r.string()) }
                history.append(
                    SchemaMigration(
                        sequence: sequence, date: RecordFrame.date(time), fromFingerprint: from, toFingerprint: to,
                        fromVersion: fromVersion.isEmpty ? nil : fromVersion,
                        toVersion: toVersion.isEmpty ? nil : toVersion, steps: steps))
            }
        }
        guard r.isAtEnd else { throw r.failure("trailing bytes") }
        do {
            return try Schema(entities).withHistory(history)
        } catch let error as TrellisError {
            throw TrellisError(.corrupt, "\(context): the stored schema is not valid: \(error.message)")
        }
    }
}

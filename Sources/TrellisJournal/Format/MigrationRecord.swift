import Foundation
import TrellisCore
import TrellisGraph

/// A schema migration as the journal records it (record type 6): everything replay needs to repeat it exactly, and
/// what `trellis info` and history show. One record holds every stage of one open's migration, so a migration
/// becomes visible in one atomic step.
///
/// Payload: u8 codec version (1); from and to fingerprints (8 bytes each); step count and steps (strings); stage
/// count, then per stage: from and to version (strings, empty for none); the stage's schema (varint length, then
/// `SchemaCodec` bytes); per entity of that schema: source entity + 1 (varint, 0 = new), attribute count and per
/// attribute source + 1 and a flags byte (1: integers to doubles, 2: nulls to the default), relationship count and
/// per relationship source + 1; then u8 1 and a change-set payload in the stage's schema (varint length, then
/// `ChangeSetCodec` bytes), or u8 0.
package struct MigrationRecord: Sendable {
    package struct Stage: Sendable {
        var fromVersion: String?
        var toVersion: String?
        var schema: Schema
        var mapping: SchemaMapping
        /// What a custom stage's code changed, in the stage's schema.
        var changes: ChangeSet?

        package init(
            fromVersion: String?, toVersion: String?, schema: Schema, mapping: SchemaMapping, changes: ChangeSet?
        ) {
            self.fromVersion = fromVersion
            self.toVersion = toVersion
            self.schema = schema
            self.mapping = mapping
            self.changes = changes
        }
    }

    var from: UInt64
    var to: UInt64
    var steps: [String]
    var stages: [Stage]

    static let codecVersion: UInt8 = 1

    package func encoded() -> [UInt8] {
        ByteWriter.bytes { write(into: &$0) }
    }

    private func write(into w: inout ByteWriter) {
        w.u8(Self.codecVersion)
        w.u64(from)
        w.u64(to)
        w.varint(steps.count)
        for step in steps { w.string(step) }
        w.varint(stages.count)
        for stage in stages {
            w.string(stage.fromVersion ?? "")
            w.string(stage.toVersion ?? "")
            w.blob(SchemaCodec.encode(stage.schema.withHistory([])))
            for map in stage.mapping.entities {
                w.varint(map.source.map { $0 + 1 } ?? 0)
                w.varint(map.attributes.count)
                for a in map.attributes {
                    w.varint(a.source.map { $0 + 1 } ?? 0)
                    w.u8((a.toDouble ? 1 : 0) | (a.fillNulls ? 2 : 0))
                }
                w.varint(map.relationships.count)
                for r in map.relationships { w.varint(r.map { $0 + 1 } ?? 0) }
            }
            if let changes = stage.changes {
                w.u8(1)
                w.blob(ChangeSetCodec.encode(changes, schema: stage.schema))
            } else {
                w.u8(0)
            }
        }
    }

    /// Decodes a record written on top of `base` (the schema in effect before it), checking that every stage's
    /// mapping fits the schema before it, so that applying it cannot trap.
    static func decode(_ bytes: [UInt8], base: Schema, context: String) throws -> MigrationRecord {
        var r = ByteReader(bytes, context: context)
        let version = try r.u8()
        guard version == codecVersion else { throw r.failure("unknown migration record version \(version)") }
        var record = MigrationRecord(from: try r.u64(), to: try r.u64(), steps: [], stages: [])
        for _ in 0..<(try r.count()) { record.steps.append(try r.string()) }
        var before = base
        for _ in 0..<(try r.count()) {
            let fromVersion = try r.string()
            let toVersion = try r.string()
            let schema = try SchemaCodec.decode(Array(try r.blob()), context: context)
            var maps: [SchemaMapping.EntityMap] = []
            for layout in schema.layouts {
                let source = try optionalIndex(&r, below: before.layouts.count)
                let from = source.map { before.layouts[$0] }
                guard try r.count() == layout.attributes.count else { throw r.failure("attribute count") }
                var attributes: [SchemaMapping.AttributeSource] = []
                for a in layout.attributes {
                    guard let from else {
                        guard try r.varint() == 0 else { throw r.failure("a new entity with a stored column") }
                        _ = try r.u8()
                        attributes.append(.init(source: nil))
                        continue
                    }
                    let s = try optionalIndex(&r, below: from.attributes.count)
                    let flags = try r.u8()
                    guard flags < 4 else { throw r.failure("attribute flags \(flags)") }
                    let map = SchemaMapping.AttributeSource(
                        source: s, toDouble: flags & 1 != 0, fillNulls: flags & 2 != 0)
                    if let s {
                        let kind = Column.Kind(from.attributes[s].type)
                        let fits =
                            map.toDouble ? kind == .int && Column.Kind(a.type) == .double : kind == Column.Kind(a.type)
                        guard fits else { throw r.failure("\(layout.name).\(a.name) maps to a column of another kind") }
                    }
                    attributes.append(map)
                }
                guard try r.count() == layout.relationships.count else { throw r.failure("relationship count") }
                var relationships: [Int?] = []
                for rel in layout.relationships {
                    guard let from else {
                        guard try r.varint() == 0 else { throw r.failure("a new entity with stored links") }
                        relationships.append(nil)
                        continue
                    }
                    let s = try optionalIndex(&r, below: from.relationships.count)
                    if let s, from.relationships[s].isToMany != rel.isToMany {
                        throw r.failure("\(layout.name).\(rel.name) maps to links of another kind")
                    }
                    relationships.append(s)
                }
                maps.append(.init(source: source, attributes: attributes, relationships: relationships))
            }
            var changes: ChangeSet?
            if try r.u8() != 0 {
                changes = try ChangeSetCodec.decode(Array(try r.blob()), schema: schema, context: context)
            }
            record.stages.append(
                Stage(
                    fromVersion: fromVersion.isEmpty ? nil : fromVersion,
                    toVersion: toVersion.isEmpty ? nil : toVersion,
                    schema: schema, mapping: SchemaMapping(entities: maps), changes: changes))
            before = schema
        }
        guard r.isAtEnd else { throw r.failure("trailing bytes") }
        guard !record.stages.isEmpty else { throw r.failure("a migration without stages") }
        return record
    }

    private static func optionalIndex(_ r: inout ByteReader, below count: Int) throws -> Int? {
        let v = try r.varint()
        guard v <= UInt64(count) else { throw r.failure("position \(v - 1) of \(count)") }
        return v == 0 ? nil : Int(v - 1)
    }

    /// The graph after the whole migration: each stage's schema change, then its code's changes. Live migration and
    /// recovery both call this.
    func apply(to graph: Graph, sequence: UInt64) throws -> Graph {
        var graph = graph
        for stage in stages {
            graph = graph.migrated(to: stage.schema, mapping: stage.mapping)
            if let changes = stage.changes { try graph.apply(changes, sequence: sequence) }
        }
        graph.sequence = sequence
        return graph
    }

    /// The history entry this record adds.
    package func summary(sequence: UInt64, date: Date) -> SchemaMigration {
        SchemaMigration(
            sequence: sequence, date: date, fromFingerprint: from, toFingerprint: to,
            fromVersion: stages.first?.fromVersion, toVersion: stages.last?.toVersion, steps: steps)
    }

    package init(from: UInt64, to: UInt64, steps: [String], stages: [Stage]) {
        self.from = from
        self.to = to
        self.steps = steps
        self.stages = stages
    }
}

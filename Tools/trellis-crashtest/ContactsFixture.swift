import Foundation
import Trellis

/// The migration tests' contacts store, shared by child processes and the test target (`MigrationFixtures` uses it):
/// the v1 schema and seed, the v2 schema the crash tests migrate to, and a dump that a parent compares with what it
/// reads itself.
enum ContactsFixture {
    /// Teams with a unique title; people with a name, an Int32 age and an optional nickname, each in one team.
    static let v1Entities: [EntityDescription] = [
        EntityDescription(
            "Team", attributes: [AttributeDescription("title", .string)],
            relationships: [RelationshipDescription("members", to: "Person", inverse: "team", toMany: true)],
            indexes: [.unique("title")]),
        EntityDescription(
            "Person",
            attributes: [
                AttributeDescription("name", .string), AttributeDescription("age", .int32),
                AttributeDescription("nickname", .string, optional: true),
            ],
            relationships: [RelationshipDescription("team", to: "Team", inverse: "members")]),
    ]

    static let v1 = try! Schema(v1Entities)

    /// Version 2 of the crash tests: Person gains `pinned` (default false), `name` becomes `fullName` (by original
    /// name), and `age` gets an index. Three steps in one migration record: a column of defaults, a rename, an index
    /// built from the data.
    static let v2: Schema = {
        var entities = v1Entities
        entities[1].attributes[0] = AttributeDescription("fullName", .string, originalName: "name")
        entities[1].attributes.append(AttributeDescription("pinned", .bool, default: false))
        entities[1].indexes.append(.on("age"))
        return try! Schema(entities)
    }()

    static let people = 150
    static let teams = 3

    /// The seed, with the number of people as a parameter (150 by default): 3 teams, person i aged
    /// 20 + i % 40, every third without a nickname, in team i % 3, all in one commit. Returns the people's IDs.
    @discardableResult
    static func seed(_ store: Store, people: Int = people) throws -> [ObjectID] {
        try store.write { tx -> [ObjectID] in
            var teamIDs: [ObjectID] = []
            for t in 0..<teams { teamIDs.append(try tx.insert("Team", ["title": .string("team \(t)")])) }
            var ids: [ObjectID] = []
            for i in 0..<people {
                let person = try tx.insert(
                    "Person",
                    [
                        "name": .string("First\(i) Last\(i)"), "age": .int(Int64(20 + i % 40)),
                        "nickname": i % 3 == 0 ? .null : .string("nick\(i)"),
                    ])
                try tx.link(person, "team", teamIDs[i % 3])
                ids.append(person)
            }
            return ids
        }
    }

    /// Every entity, attribute, relationship and index of `snapshot`'s schema, then every object in ID order with each
    /// value and the serials of each relationship's targets: equal dumps mean equal stores, as far as the public API
    /// can tell (the test process also compares graphs directly).
    static func dump(_ snapshot: Snapshot) throws -> [String] {
        let schema = snapshot.schema
        var lines = [
            "schema \(String(schema.fingerprint, radix: 16)) sequence \(snapshot.sequence) "
                + "migrations \(schema.history.count)"
        ]
        for (e, entity) in schema.entities.enumerated() {
            let attributes = entity.attributes.map { "\($0.name):\($0.type)\($0.isOptional ? "?" : "")" }
            let relationships = entity.relationships.map {
                "\($0.name)->\($0.target)\($0.isToMany ? "*" : "") \($0.deleteRule) \($0.minCount)...\($0.maxCount ?? -1)"
            }
            let indexes = entity.indexes.map { ($0.isUnique ? "unique " : "") + $0.attributes.joined(separator: ",") }
            lines.append(
                "entity \(e) \(entity.name)\(entity.isRetired ? " retired" : "") [\(attributes.joined(separator: " "))] "
                    + "[\(relationships.joined(separator: "; "))] [\(indexes.joined(separator: "; "))]")
            // A retired entity (removed by a migration) has no objects and is not found by name.
            if entity.isRetired { continue }
            for id in try snapshot.fetch(DynamicQuery(entity.name)).sorted(by: { $0.serial < $1.serial }) {
                var fields = ["\(entity.name)#\(id.entity):\(id.serial)"]
                for attribute in entity.attributes {
                    fields.append("\(attribute.name)=\(try snapshot.value(id, attribute.name) ?? .null)")
                }
                for relationship in entity.relationships {
                    let serials = try snapshot.targets(id, relationship.name).map(\.serial).sorted()
                    fields.append("\(relationship.name)=\(serials)")
                }
                lines.append(fields.joined(separator: " "))
            }
        }
        return lines
    }
}

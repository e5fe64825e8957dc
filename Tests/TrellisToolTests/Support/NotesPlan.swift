import Foundation
import Trellis

/// The fixture schema's two versions and the plan between them, for the tool's migration cases.
enum NotesV1: VersionedSchema {
    static let versionIdentifier = "1.0.0"
    static func makeSchema() throws -> Schema { Fixture.schema }
}

/// Version 2: notes gain a score, which a custom stage sets to 1.5 × stars.
enum NotesV2: VersionedSchema {
    static let versionIdentifier = "2.0.0"
    static func makeSchema() throws -> Schema {
        var entities = Fixture.schema.entities
        entities[1].attributes.append(AttributeDescription("score", .double, default: 0))
        return try Schema(entities)
    }
}

enum NotesPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [NotesV1.self, NotesV2.self] }
    static var stages: [MigrationStage] {
        [
            .custom(fromVersion: NotesV1.self, toVersion: NotesV2.self) { context in
                for id in try context.old.fetch(DynamicQuery("Note")) {
                    guard case .int(let stars) = try context.old.value(id, "stars") else { continue }
                    try context.transaction.set(context.newID(id)!, "score", .double(Double(stars) * 1.5))
                }
            }
        ]
    }
}

/// Compares a stored schema with the one an app opens its store with, structurally, and plans the migration between
/// them: which steps lose nothing (inferred, lightweight), which need a check against the data, and which are refused.
///
/// The new schema is first aligned to the stored one: entities, attributes, relationships and indexes that survive
/// keep their stored positions (so object IDs and stored columns stay where they are) and new ones go after them.
/// Reordering the models, or the properties of a model, is therefore no change at all. A property or entity is
/// matched by its name, or, when the stored schema has no such name, by its `originalName`.
package struct MigrationPlanner {
    let stored: Schema
    let given: Schema
    /// Objects of each stored entity, for costs and for steps that only an empty entity allows.
    let counts: [Int]
    /// In a custom stage, a type change that could lose data replaces the attribute (its values become the default)
    /// instead of being refused: the stage's code fills it.
    var replacesLossyTypes = false

    private var steps: [MigrationStep] = []
    private var checks: [MigrationCheck] = []
    private var problems: [String] = []
    private var differences: [SchemaDifference] = []
    /// For each check, the position in `differences` of the change it checks.
    private var checkDifferences: [Int] = []

    init(stored: Schema, given: Schema, counts: [Int], replacesLossyTypes: Bool = false) {
        self.stored = stored
        self.given = given
        self.counts = counts
        self.replacesLossyTypes = replacesLossyTypes
    }

    package static func plan(
        from stored: Schema, to given: Schema, counts: [Int], replacesLossyTypes: Bool = false
    ) throws -> PlannedStage {
        var planner = MigrationPlanner(
            stored: stored, given: given, counts: counts, replacesLossyTypes: replacesLossyTypes)
        return try planner.run()
    }

    /// Matches names: by name when the stored side has it, else by original name; each stored item at most once.
    private static func match(_ names: [String], originals: [String?], in storedNames: [String]) -> [Int?] {
        let positions = Dictionary(storedNames.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        var taken = Set<Int>()
        var out = [Int?](repeating: nil, count: names.count)
        for (i, name) in names.enumerated() {
            if let p = positions[name], !taken.contains(p) {
                out[i] = p
                taken.insert(p)
            }
        }
        for (i, original) in originals.enumerated() where out[i] == nil && positions[names[i]] == nil {
            if let original, let p = positions[original], !taken.contains(p) {
                out[i] = p
                taken.insert(p)
            }
        }
        return out
    }

    /// The order that puts matched items at their stored positions first, then the new ones as given.
    private static func alignedOrder(_ sources: [Int?]) -> [Int] {
        let matched = sources.indices.filter { sources[$0] != nil }.sorted { sources[$0]! < sources[$1]! }
        return matched + sources.indices.filter { sources[$0] == nil }
    }

    private mutating func run() throws -> PlannedStage {
        let storedEntities = stored.entities
        let givenEntities = given.entities
        let entitySources = Self.match(
            givenEntities.map(\.name), originals: givenEntities.map(\.originalName), in: storedEntities.map(\.name))
        // Stored entity number -> new entity name, for relationship targets.
        var newName: [Int: String] = [:]
        for (g, s) in entitySources.enumerated() { if let s { newName[s] = givenEntities[g].name } }

        var aligned: [EntityDescription] = []
        var maps: [SchemaMapping.EntityMap] = []
        func addNew(_ entity: EntityDescription, source: Int?) {
            steps.append(MigrationStep(.addEntity, entity: entity.name, detail: "add entity"))
            differ(entity.name, nil, .entity, nil, Self.summary(entity))
            aligned.append(entity)
            maps.append(
                SchemaMapping.EntityMap(
                    source: source, attributes: entity.attributes.map { _ in .init(source: nil) },
                    relationships: entity.relationships.map { _ in nil }))
        }
        // Stored entities keep their numbers: a removed one stays as a retired placeholder (no properties, no
        // objects), so the numbers after it, and the IDs of their objects, do not change.
        for (s, old) in storedEntities.enumerated() {
            // A schema read from a store (the `trellis` tool's) holds the retired placeholders itself.
            guard let g = entitySources.firstIndex(of: s), !givenEntities[g].isRetired else {
                if !old.isRetired {
                    steps.append(
                        MigrationStep(.removeEntity, entity: old.name, detail: "remove entity", objects: counts[s]))
                    differ(old.name, nil, .entity, Self.summary(old), nil)
                }
                var retired = EntityDescription(old.name)
                retired.isRetired = true
                aligned.append(retired)
                maps.append(SchemaMapping.EntityMap(source: s, attributes: [], relationships: []))
                continue
            }
            let entity = givenEntities[g]
            if old.isRetired {
                // An entity of a removed one's name comes back, empty, in its place.
                addNew(entity, source: s)
                continue
            }
            if old.name != entity.name {
                steps.append(
                    MigrationStep(.renameEntity, entity: entity.name, detail: "rename entity from '\(old.name)'"))
                differ(entity.name, nil, .name, old.name, entity.name)
            }
            let (entityOut, map) = planEntity(
                entity, from: old, storedNumber: s, number: aligned.count, newNames: newName)
            aligned.append(entityOut)
            maps.append(map)
        }
        for (g, entity) in givenEntities.enumerated() where entitySources[g] == nil && !entity.isRetired {
            addNew(entity, source: nil)
        }
        let schema: Schema
        do {
            schema = try Schema(aligned).withHistory(stored.history)
        } catch let error as TrellisError {
            throw TrellisError(.invalidSchema, "the new schema is not valid: \(error.message)")
        }
        checkRelationshipPairs(schema, maps)
        // Index positions follow the aligned entities; checks were recorded by aligned entity number.
        return PlannedStage(
            schema: schema, mapping: SchemaMapping(entities: maps), steps: steps, checks: checks, problems: problems,
            differences: differences, checkDifferences: checkDifferences)
    }

    // MARK: One entity

    private mutating func planEntity(
        _ entity: EntityDescription, from old: EntityDescription, storedNumber s: Int, number e: Int,
        newNames: [Int: String]
    ) -> (EntityDescription, SchemaMapping.EntityMap) {
        let objects = counts[s]
        var out = entity

        // Attributes.
        let attributeSources = Self.match(
            entity.attributes.map(\.name), originals: entity.attributes.map(\.originalName),
            in: old.attributes.map(\.name))
        let attributeOrder = Self.alignedOrder(attributeSources)
        out.attributes = attributeOrder.map { entity.attributes[$0] }
        var attributeMap: [SchemaMapping.AttributeSource] = []
        for (position, g) in attributeOrder.enumerated() {
            let a = entity.attributes[g]
            guard let source = attributeSources[g] else {
                attributeMap.append(.init(source: nil))
                planNewAttribute(a, entity: entity.name, objects: objects, e: e, position: position)
                continue
            }
            let was = old.attributes[source]
            if was.name != a.name {
                steps.append(
                    MigrationStep(
                        .renameAttribute, entity: entity.name, property: a.name,
                        detail: "rename attribute '\(was.name)' to '\(a.name)'"))
                differ(entity.name, a.name, .name, was.name, a.name)
            }
            var map = SchemaMapping.AttributeSource(source: source)
            if was.type != a.type {
                differ(entity.name, a.name, .type, "\(was.type)", "\(a.type)")
                switch Self.widening(from: was.type, to: a.type) {
                case .some(let toDouble):
                    map.toDouble = toDouble
                    steps.append(
                        MigrationStep(
                            .widenType, entity: entity.name, property: a.name,
                            detail: "widen '\(a.name)' from \(was.type) to \(a.type)", objects: toDouble ? objects : 0))
                case .none where replacesLossyTypes:
                    map = .init(source: nil)
                    steps.append(
                        MigrationStep(
                            .replaceAttribute, entity: entity.name, property: a.name,
                            detail: "replace '\(a.name)' (\(was.type)) with a new \(a.type) column", objects: objects))
                case .none:
                    refuse(
                        "\(entity.name).\(a.name): changing its type from \(was.type) to \(a.type) can lose data "
                            + "(only widening integers, integers to Double and Float to Double are inferred; use a "
                            + "custom migration stage)")
                }
            }
            if was.isOptional != a.isOptional {
                differ(entity.name, a.name, .optionality, Self.optionality(was), Self.optionality(a))
                if a.isOptional {
                    steps.append(
                        MigrationStep(
                            .makeOptional, entity: entity.name, property: a.name, detail: "make '\(a.name)' optional"))
                } else {
                    let fill = a.defaultValue.map { !$0.isNull } ?? false
                    if fill && map.source != nil { map.fillNulls = true }
                    steps.append(
                        MigrationStep(
                            .makeRequired, entity: entity.name, property: a.name,
                            detail: fill
                                ? "make '\(a.name)' required, nulls become \(a.defaultValue!)"
                                : "make '\(a.name)' required (it has no default: no object may hold null)",
                            objects: objects))
                    if !fill { check(.noNulls(entity: e, attribute: position)) }
                }
            }
            if was.defaultValue != a.defaultValue {
                differ(entity.name, a.name, .defaultValue, Self.text(was.defaultValue), Self.text(a.defaultValue))
            }
            attributeMap.append(map)
        }
        for (i, a) in old.attributes.enumerated() where !attributeSources.contains(i) {
            steps.append(
                MigrationStep(
                    .removeAttribute, entity: entity.name, property: a.name, detail: "remove attribute '\(a.name)'",
                    objects: objects))
            differ(entity.name, a.name, .attribute, Self.summary(a), nil)
        }

        // Relationships.
        let relationshipSources = matchRelationships(entity, old)
        let relationshipOrder = Self.alignedOrder(relationshipSources)
        out.relationships = relationshipOrder.map { entity.relationships[$0] }
        var relationshipMap: [Int?] = []
        for (position, g) in relationshipOrder.enumerated() {
            let r = entity.relationships[g]
            guard let source = relationshipSources[g] else {
                relationshipMap.append(nil)
                steps.append(
                    MigrationStep(
                        .addRelationship, entity: entity.name, property: r.name,
                        detail: "add relationship '\(r.name)' to \(r.target) (empty)"))
                differ(entity.name, r.name, .relationship, nil, Self.summary(r))
                if r.minCount > 0 && objects > 0 { check(.counts(entity: e, relationship: position)) }
                continue
            }
            relationshipMap.append(source)
            let was = old.relationships[source]
            if was.name != r.name {
                steps.append(
                    MigrationStep(
                        .renameRelationship, entity: entity.name, property: r.name,
                        detail: "rename relationship '\(was.name)' to '\(r.name)'"))
                differ(entity.name, r.name, .name, was.name, r.name)
            }
            let storedTarget = stored.entities.firstIndex { $0.name == was.target }
            if storedTarget.flatMap({ newNames[$0] }) != r.target {
                differ(entity.name, r.name, .target, was.target, r.target)
                refuse(
                    "\(entity.name).\(r.name): it targets \(r.target) where the store's targets \(was.target)")
            }
            if was.isToMany != r.isToMany {
                differ(entity.name, r.name, .cardinality, Self.cardinality(was), Self.cardinality(r))
                refuse(
                    "\(entity.name).\(r.name): changing it from to-\(was.isToMany ? "many" : "one") to "
                        + "to-\(r.isToMany ? "many" : "one") is not inferred; use a custom migration stage")
            } else if was.isOrdered != r.isOrdered {
                differ(entity.name, r.name, .cardinality, Self.cardinality(was), Self.cardinality(r))
                refuse(
                    "\(entity.name).\(r.name): changing it from \(Self.cardinality(was)) to \(Self.cardinality(r)) "
                        + "is not inferred; use a custom migration stage")
            }
            if was.deleteRule != r.deleteRule {
                steps.append(
                    MigrationStep(
                        .changeDeleteRule, entity: entity.name, property: r.name,
                        detail: "delete rule of '\(r.name)' from \(was.deleteRule) to \(r.deleteRule)"))
                differ(entity.name, r.name, .deleteRule, "\(was.deleteRule)", "\(r.deleteRule)")
            }
            if was.minCount != r.minCount || was.maxCount != r.maxCount {
                let bounds = Self.bounds(r)
                differ(entity.name, r.name, .count, Self.bounds(was), bounds)
                steps.append(
                    MigrationStep(
                        .changeCount, entity: entity.name, property: r.name,
                        detail: "count bounds of '\(r.name)' become \(bounds)", objects: objects))
                let tighter =
                    r.minCount > was.minCount
                    || (r.maxCount.map { m in was.maxCount.map { m < $0 } ?? true }
                        ?? false)
                if tighter { check(.counts(entity: e, relationship: position)) }
            }
        }
        for (i, r) in old.relationships.enumerated() where !relationshipSources.contains(i) {
            steps.append(
                MigrationStep(
                    .removeRelationship, entity: entity.name, property: r.name,
                    detail: "remove relationship '\(r.name)'", objects: objects))
            differ(entity.name, r.name, .relationship, Self.summary(r), nil)
        }

        // Indexes, compared by the new names of their attributes.
        let renamed = Dictionary(
            attributeSources.enumerated().compactMap { g, s in
                s.map { (old.attributes[$0].name, entity.attributes[g].name) }
            },
            uniquingKeysWith: { a, _ in a })
        let storedIndexes = old.indexes.map {
            IndexDescription($0.attributes.map { renamed[$0] ?? "\u{0}" + $0 }, unique: $0.isUnique)
        }
        var indexSources = [Int?](repeating: nil, count: entity.indexes.count)
        var taken = Set<Int>()
        for (g, index) in entity.indexes.enumerated() {
            if let s = storedIndexes.indices.first(where: { !taken.contains($0) && storedIndexes[$0] == index }) {
                indexSources[g] = s
                taken.insert(s)
            }
        }
        let indexOrder = Self.alignedOrder(indexSources)
        out.indexes = indexOrder.map { entity.indexes[$0] }
        for (position, g) in indexOrder.enumerated() where indexSources[g] == nil {
            let index = entity.indexes[g]
            let what =
                "\(index.isUnique ? "unique constraint" : "index") on (\(index.attributes.joined(separator: ", ")))"
            steps.append(
                MigrationStep(
                    .addIndex, entity: entity.name, property: index.attributes.joined(separator: ","),
                    detail: "add \(what)", objects: objects))
            differ(
                entity.name, index.attributes.joined(separator: ", "), .index, nil, index.isUnique ? "unique" : "index")
            if index.isUnique { check(.unique(entity: e, index: position)) }
        }
        for (s, index) in old.indexes.enumerated() where !taken.contains(s) {
            let what =
                "\(index.isUnique ? "unique constraint" : "index") on (\(index.attributes.joined(separator: ", ")))"
            steps.append(
                MigrationStep(
                    .removeIndex, entity: entity.name, property: index.attributes.joined(separator: ","),
                    detail: "remove \(what)"))
            differ(
                entity.name, index.attributes.joined(separator: ", "), .index, index.isUnique ? "unique" : "index", nil)
        }
        return (out, SchemaMapping.EntityMap(source: s, attributes: attributeMap, relationships: relationshipMap))
    }

    private mutating func planNewAttribute(
        _ a: AttributeDescription, entity: String, objects: Int, e: Int, position: Int
    ) {
        differ(entity, a.name, .attribute, nil, Self.summary(a))
        let fill: String
        if let d = a.defaultValue, !d.isNull {
            fill = "default \(d)"
        } else if a.isOptional {
            fill = "null"
        } else {
            fill = "no default"
            if objects > 0 {
                refuse(
                    "\(entity).\(a.name): a new required attribute without a default, and \(objects) objects have no "
                        + "value for it (give it a default, make it optional, or fill it in a custom stage)")
            }
        }
        steps.append(
            MigrationStep(
                .addAttribute, entity: entity, property: a.name,
                detail: "add attribute '\(a.name)' (\(a.type), \(fill))",
                objects: objects))
    }

    /// Relationships matched by name or original name, then each unmatched one whose inverse is matched to the
    /// inverse of an unmatched stored one (a hidden inverse, named after its entity, is renamed with it).
    private func matchRelationships(_ entity: EntityDescription, _ old: EntityDescription) -> [Int?] {
        var sources = Self.match(
            entity.relationships.map(\.name), originals: entity.relationships.map(\.originalName),
            in: old.relationships.map(\.name))
        for (g, r) in entity.relationships.enumerated() where sources[g] == nil {
            // The stored relationship on the old entity whose inverse has the stored name of r's inverse.
            guard let target = given.entities.first(where: { $0.name == r.target }),
                let inverse = target.relationships.first(where: { $0.name == r.inverse })
            else { continue }
            let storedTargetName =
                stored.entities.contains(where: { $0.name == target.name }) ? target.name : target.originalName
            guard let storedTarget = stored.entities.first(where: { $0.name == storedTargetName }) else { continue }
            let storedInverseName =
                storedTarget.relationships.contains(where: { $0.name == inverse.name })
                ? inverse.name : inverse.originalName
            guard let storedInverse = storedTarget.relationships.first(where: { $0.name == storedInverseName }),
                let s = old.relationships.firstIndex(where: { $0.name == storedInverse.inverse }),
                !sources.contains(s)
            else { continue }
            sources[g] = s
        }
        return sources
    }

    /// Both ends of a kept relationship must still be each other's inverse.
    private mutating func checkRelationshipPairs(_ schema: Schema, _ maps: [SchemaMapping.EntityMap]) {
        for (e, layout) in schema.layouts.enumerated() {
            guard let s = maps[e].source, !stored.entities[s].isRetired else { continue }
            for (k, r) in layout.relationships.enumerated() {
                guard let source = maps[e].relationships[k] else { continue }
                let storedInverse = stored.layouts[s].relationships[source].inverse
                let t = Int(r.target)
                guard let ts = maps[t].source, !stored.entities[ts].isRetired,
                    maps[t].relationships[r.inverse] == storedInverse
                else {
                    let was = stored.layouts[s].relationships[source]
                    differ(
                        layout.name, r.name, .inverse,
                        stored.layouts[Int(was.target)].relationships[was.inverse].name,
                        schema.layouts[t].relationships[r.inverse].name)
                    refuse(
                        "\(layout.name).\(r.name): its inverse is no longer the one the store pairs it with")
                    continue
                }
            }
        }
    }

    // MARK: Differences

    private mutating func differ(
        _ entity: String, _ property: String?, _ aspect: SchemaDifference.Aspect, _ stored: String?, _ new: String?
    ) {
        differences.append(
            SchemaDifference(entity: entity, property: property, aspect: aspect, stored: stored, new: new))
    }

    /// Refuses the migration for the difference recorded last.
    private mutating func refuse(_ problem: String) {
        problems.append(problem)
        differences[differences.count - 1] = differences[differences.count - 1].refused(problem)
    }

    /// Checks the data for the difference recorded last.
    private mutating func check(_ check: MigrationCheck) {
        checks.append(check)
        checkDifferences.append(differences.count - 1)
    }

    private static func summary(_ entity: EntityDescription) -> String {
        "\(entity.attributes.count) attributes, \(entity.relationships.count) relationships"
    }

    private static func summary(_ a: AttributeDescription) -> String {
        "\(a.type)" + (a.isOptional ? ", optional" : "") + (a.defaultValue.map { ", default \($0)" } ?? "")
    }

    private static func summary(_ r: RelationshipDescription) -> String { "\(cardinality(r)) \(r.target)" }

    private static func optionality(_ a: AttributeDescription) -> String { a.isOptional ? "optional" : "required" }

    private static func cardinality(_ r: RelationshipDescription) -> String {
        r.isOrdered ? "ordered to-many" : r.isToMany ? "to-many" : "to-one"
    }

    private static func bounds(_ r: RelationshipDescription) -> String {
        "\(r.minCount)...\(r.maxCount.map(String.init) ?? "")"
    }

    private static func text(_ value: Value?) -> String { value.map(\.description) ?? "none" }

    /// nil when a type change can lose data; otherwise whether the stored integers must become doubles.
    static func widening(from old: AttributeType, to new: AttributeType) -> Bool? {
        let integerWidth: [AttributeType: Int] = [.int8: 8, .int16: 16, .int32: 32, .int64: 64, .int: 64]
        if let a = integerWidth[old], let b = integerWidth[new] { return a <= b ? false : nil }
        if integerWidth[old] != nil && new == .double { return true }
        if old == .float && new == .double { return false }
        return nil
    }
}

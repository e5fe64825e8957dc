import Foundation
import Testing
import Trellis

/// Issue 16, item 5: models were not `Identifiable`, so `ForEach(chores)` and other `Identifiable` code did not take
/// them, as it takes SwiftData's. They are, by `objectID` (as SwiftData's are by `persistentModelID`, which is here
/// too), without taking the name `id` from a model that declares a property of its own called so.
@Suite struct IdentifiableModelTests {
    /// A model with its own `id`, as SwiftData users often declare one.
    final class Account: Model {
        @Attribute(.unique) var id = UUID()
        @Attribute var name = ""
    }

    static func identities<T: Identifiable>(_ items: [T]) -> [T.ID] { items.map(\.id) }

    @Test func modelsAreIdentifiableByTheirObjectID() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        let chores = [Chore(title: "a"), Chore(title: "b")]
        #expect(Self.identities(chores) == [nil, nil], "nothing identifies an object before it is inserted")
        for chore in chores { context.insert(chore) }
        let ids = chores.map(\.objectID)
        #expect(ids.allSatisfy { $0 != nil })
        #expect(Self.identities(chores) == ids)
        #expect(chores.map(\.id) == ids && chores.map(\.persistentModelID) == ids)
        #expect(Chore.ID.self == ObjectID?.self)
        try context.save()

        // `id` and `persistentModelID` work in predicates as `objectID` does.
        let wanted = ids[1]
        let byID = try ModelContext(store).fetch(FetchDescriptor<Chore>(predicate: #Predicate { $0.id == wanted }))
        #expect(byID.map(\.title) == ["b"])
        let byPersistentID = try ModelContext(store).fetch(
            FetchDescriptor<Chore>(predicate: #Predicate { $0.persistentModelID == wanted }))
        #expect(byPersistentID.map(\.title) == ["b"])
    }

    @Test func aModelsOwnIdPropertyStaysAnAttributeAndIdentityStaysTheObjectID() throws {
        let store = try Store(models: [Account.self])
        #expect(store.schema.entities[0].attributes.map(\.name) == ["id", "name"])
        #expect(store.schema.entities[0].indexes == [IndexDescription(["id"], unique: true)])
        let context = ModelContext(store)
        let ann = Account()
        ann.name = "Ann"
        context.insert(ann)
        try context.save()
        let uuid: UUID = ann.id
        #expect(Self.identities([ann]) == [ann.objectID], "Identifiable code uses the objectID")

        let found = try ModelContext(store).fetch(FetchDescriptor<Account>(predicate: #Predicate { $0.id == uuid }))
        #expect(found.map(\.name) == ["Ann"] && found.first?.id == uuid)
    }
}

import Testing

@testable import TrellisCore
@testable import TrellisStore

/// A context's pending updates find each object's entry through an open-addressed table keyed by the entries' own
/// IDs; writes, deletes (which move the last entry into the hole) and lookups must agree with a dictionary model
/// through every growth of the table and every backward shift of a removal.
@Suite struct UpdateIndexTests {
    @Test func pendingUpdatesAgreeWithADictionaryThroughRandomWritesAndDeletes() {
        var random = SystemRandomNumberGenerator()
        let pending = PendingChanges()
        var model: [ObjectID: Int64] = [:]
        var deleted: Set<ObjectID> = []
        // Serials from a small range per entity, so that writes hit existing entries and deletes hit live ones.
        func anyID() -> ObjectID {
            ObjectID(
                entity: UInt32.random(in: 0..<3, using: &random), serial: UInt64.random(in: 1...600, using: &random))
        }
        for step in 0..<30_000 {
            let id = anyID()
            if Int.random(in: 0..<10, using: &random) == 0 {
                pending.delete(id, requested: true)
                model[id] = nil
                deleted.insert(id)
            } else if !deleted.contains(id) {
                let value = Int64(step)
                pending.set(id, 0, .int(value))
                model[id] = value
            }
            if step % 1_000 == 999 {
                #expect(pending.allUpdates.count == model.count)
                #expect(Set(pending.allUpdates.map(\.id)) == Set(model.keys))
            }
        }
        for entity in 0..<3 {
            for serial in 1...600 {
                let id = ObjectID(entity: UInt32(entity), serial: UInt64(serial))
                #expect(pending.changes(id)?.value(of: 0) == model[id].map { .int($0) })
                #expect(pending.touches(id) == (model[id] != nil || deleted.contains(id)))
            }
        }
        #expect(!model.isEmpty && !deleted.isEmpty)
        pending.removeAll()
        #expect(pending.allUpdates.isEmpty && pending.changes(ObjectID(entity: 0, serial: 1)) == nil)
    }
}

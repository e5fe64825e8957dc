import Foundation
import Testing
import Trellis

/// Issue 16, item 1: after a delete was saved, `chore.title = "x"` was dropped without a word (`hasChanges` false,
/// reads the old value). Now the context has changes, and the next save throws `.missingObject` naming the
/// assignment, once; the other pending changes stay pending and save after it.
@Suite struct WritesToDeletedObjectsTests {
    @Test func assigningToADeletedObjectMakesTheNextSaveThrowNamingIt() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        let project = Project(name: "Launch")
        let chore = Chore(title: "Write", project: project)
        context.insert(chore)
        try context.save()
        context.delete(chore)
        try context.save()
        #expect(!context.hasChanges)

        chore.title = "x"
        chore.project = project
        #expect(context.hasChanges, "an assignment to a deleted object is a change the context must not lose quietly")
        let other = Chore(title: "Other")
        context.insert(other)
        do {
            try context.save()
            Issue.record("a save with assignments to a deleted object succeeded")
        } catch let error as TrellisError {
            #expect(error.code == .missingObject)
            #expect(error.message.contains("Chore#1.title"), "\(error.message)")
            #expect(error.message.contains("Chore#1.project"), "\(error.message)")
        }
        // Reported once: the insert still pending saves next, and the deleted object stays deleted.
        #expect(context.hasChanges)
        try context.save()
        #expect(try store.snapshot.count("Chore") == 1)
        #expect(!context.hasChanges)
    }

    @Test func rollbackForgetsTheAssignmentsToDeletedObjects() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        let chore = Chore(title: "Write")
        context.insert(chore)
        try context.save()
        context.delete(chore)
        chore.estimate = 3  // deleted in this context, not yet saved
        #expect(context.hasChanges)
        context.rollback()
        #expect(!context.hasChanges)
        try context.save()
        #expect(try store.snapshot.count("Chore") == 1)
    }
}

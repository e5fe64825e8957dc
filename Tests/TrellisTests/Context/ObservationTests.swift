import Foundation
import Observation
import Synchronization
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Issue 17, Observation: model objects are `Observable`. A property read inside `withObservationTracking` is
/// registered, and a change that reaches the object's context (its own setter, the other end of a relationship edit,
/// a commit the context moves to, a delete, a rollback, a child's save) notifies exactly the observers of what
/// changed.
@MainActor @Suite struct ObservationTests {
    // MARK: Commits the view context follows

    @Test func anAttributeReadInTheViewContextHearsOfABackgroundSaveToItAndNotOfOtherChanges() async throws {
        let store = try makeStore()
        let view = store.viewContext
        let (id, otherID) = try await insertTwoChores(store)
        view.refresh()
        let chore = try #require(view.model(for: id, as: Chore.self))
        let other = try #require(view.model(for: otherID, as: Chore.self))
        let title = Tracked { _ = chore.title }
        let otherEstimate = Tracked { _ = other.estimate }

        // Another attribute of the same object, and the same attribute of another object: nobody hears.
        try await store.performBackgroundTask { context in
            context.model(for: id, as: Chore.self)!.estimate = 2
            context.model(for: otherID, as: Chore.self)!.title = "other renamed"
            try context.save()
        }
        view.refresh()
        #expect(chore.estimate == 2 && other.title == "other renamed", "the view context moved")
        #expect(title.count == 0)
        #expect(otherEstimate.count == 0)

        try await store.performBackgroundTask { context in
            context.model(for: id, as: Chore.self)!.title = "renamed"
            try context.save()
        }
        view.refresh()
        #expect(title.count == 1)
        #expect(chore.title == "renamed")
        #expect(otherEstimate.count == 0)
    }

    @Test func theViewContextNotifiesWhenTheMainActorRunsItsDeliveryWithNoRefresh() async throws {
        let store = try makeStore()
        let view = store.viewContext
        let (id, _) = try await insertTwoChores(store)
        #expect(await eventuallyYielding { view.model(for: id, as: Chore.self) != nil })
        let chore = try #require(view.model(for: id, as: Chore.self))
        let title = Tracked { _ = chore.title }
        let done = Tracked { _ = chore.done }

        try await store.performBackgroundTask { context in
            context.model(for: id, as: Chore.self)!.title = "renamed in the background"
            try context.save()
        }
        #expect(await eventuallyYielding { title.count == 1 })
        #expect(chore.title == "renamed in the background")
        #expect(done.count == 0)
    }

    @Test func onChangeRunsBeforeTheValueChangesAndObservationsSeeTheNewValue() async throws {
        let store = try makeStore()
        let view = store.viewContext
        let (id, _) = try await insertTwoChores(store)
        view.refresh()
        let chore = MainActorBox(try #require(view.model(for: id, as: Chore.self)))
        let seen = Mutex<[String]>([])
        withObservationTracking {
            _ = chore.value.title
        } onChange: {
            let value = MainActor.assumeIsolated { chore.value.title }
            seen.locked { $0.append(value) }
        }
        let titles = Mutex<[String]>([])
        let following = Task { @MainActor in
            for await title in Observations({ chore.value.title }) { titles.locked { $0.append(title) } }
        }
        defer { following.cancel() }
        #expect(await eventuallyYielding { titles.locked { $0 } == ["first"] })

        try await store.performBackgroundTask { context in
            context.model(for: id, as: Chore.self)!.title = "new"
            try context.save()
        }
        view.refresh()
        #expect(seen.locked { $0 } == ["first"], "willSet: the value has not changed yet")
        #expect(await eventuallyYielding { titles.locked { $0 } == ["first", "new"] }, "didSet: the value has changed")
    }

    // MARK: Relationships

    @Test func aRelationshipReadHearsOfABackgroundEditOfEitherEnd() async throws {
        let store = try makeStore()
        let view = store.viewContext
        let (launch, chore, other) = try await store.performBackgroundTask { context in
            let launch = Project(name: "Launch")
            let other = Project(name: "Other")
            let chore = Chore(title: "plan", project: launch)
            context.insert(chore)
            context.insert(other)
            try context.save()
            return (launch.objectID!, chore.objectID!, other.objectID!)
        }
        view.refresh()
        let project = try #require(view.model(for: launch, as: Project.self))
        let item = try #require(view.model(for: chore, as: Chore.self))
        let otherProject = try #require(view.model(for: other, as: Project.self))
        let chores = Tracked { _ = project.chores }
        let name = Tracked { _ = project.name }
        let itsProject = Tracked { _ = item.project }
        let title = Tracked { _ = item.title }
        let otherChores = Tracked { _ = otherProject.chores }

        // A new chore in the project: the project's to-many end changes, nothing of the first chore does.
        try await store.performBackgroundTask { context in
            let launch = context.model(for: launch, as: Project.self)!
            context.insert(Chore(title: "build", project: launch))
            try context.save()
        }
        view.refresh()
        #expect(project.chores.map(\.title).sorted() == ["build", "plan"])
        #expect(chores.count == 1)
        #expect(name.count == 0 && itsProject.count == 0 && title.count == 0 && otherChores.count == 0)

        // The chore moves to the other project: its to-one end and the other project's to-many end change.
        let launchChores = Tracked { _ = project.chores }
        try await store.performBackgroundTask { context in
            context.model(for: chore, as: Chore.self)!.project = context.model(for: other, as: Project.self)
            try context.save()
        }
        view.refresh()
        #expect(item.project === otherProject)
        #expect(otherProject.chores == [item])
        #expect(project.chores.map(\.title) == ["build"])
        #expect(itsProject.count == 1 && otherChores.count == 1 && launchChores.count == 1)
        #expect(title.count == 0 && name.count == 0)
    }

    // MARK: Local changes

    @Test func aLocalWriteNotifiesAtOnceOnlyTheObserversOfThatProperty() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        let chore = Chore(title: "plan")
        let unmanagedTitle = Tracked { _ = chore.title }
        chore.title = "planned"
        #expect(unmanagedTitle.count == 1, "an object not inserted yet notifies too")

        context.insert(chore)
        try context.save()
        let title = Tracked { _ = chore.title }
        let estimate = Tracked { _ = chore.estimate }
        chore.title = "renamed"
        #expect(title.count == 1)
        #expect(estimate.count == 0)
        #expect(chore.title == "renamed")

        // Saving brings in nothing new: nobody hears, the value stays.
        let again = Tracked { _ = chore.title }
        try context.save()
        #expect(again.count == 0)
        #expect(chore.title == "renamed")
    }

    @Test func aLocalRelationshipEditNotifiesTheEndsItChanges() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        let launch = Project(name: "Launch")
        let other = Project(name: "Other")
        let bystander = Project(name: "Bystander")
        let chore = Chore(title: "plan", project: launch)
        context.insert(chore)
        context.insert(other)
        context.insert(bystander)
        try context.save()

        let launchChores = Tracked { _ = launch.chores }
        let otherChores = Tracked { _ = other.chores }
        let bystanderChores = Tracked { _ = bystander.chores }
        let project = Tracked { _ = chore.project }
        let title = Tracked { _ = chore.title }
        chore.project = other
        #expect(project.count == 1 && launchChores.count == 1 && otherChores.count == 1)
        #expect(bystanderChores.count == 0 && title.count == 0)
        #expect(launch.chores.isEmpty && other.chores == [chore])

        // From the to-many end: the chore's to-one end hears, and so does the project it leaves.
        let project2 = Tracked { _ = chore.project }
        let otherChores2 = Tracked { _ = other.chores }
        let bystanderChores2 = Tracked { _ = bystander.chores }
        bystander.chores = [chore]
        #expect(project2.count == 1 && otherChores2.count == 1 && bystanderChores2.count == 1)
        #expect(chore.project === bystander)

        // A new object inserted with a relationship: the existing end hears.
        let bystanderChores3 = Tracked { _ = bystander.chores }
        context.insert(Chore(title: "more", project: bystander))
        #expect(bystanderChores3.count == 1)
        #expect(bystander.chores.count == 2)

        // Assigning what is already there changes nothing: nobody hears.
        let unchanged = Tracked { _ = chore.project }
        chore.project = bystander
        #expect(unchanged.count == 0)
    }

    // MARK: Deletes

    @Test func aDeleteElsewhereNotifiesTheObjectsObserversAndTheEndsThatPointedAtIt() async throws {
        let store = try makeStore()
        let view = store.viewContext
        let (launch, chore) = try await store.performBackgroundTask { context in
            let chore = Chore(title: "doomed", project: Project(name: "Launch"))
            context.insert(chore)
            try context.save()
            return (chore.project!.objectID!, chore.objectID!)
        }
        view.refresh()
        let project = try #require(view.model(for: launch, as: Project.self))
        let item = try #require(view.model(for: chore, as: Chore.self))
        let title = Tracked { _ = item.title }
        let chores = Tracked { _ = project.chores }
        let name = Tracked { _ = project.name }

        try await store.performBackgroundTask { context in
            context.delete(context.model(for: chore, as: Chore.self)!)
            try context.save()
        }
        view.refresh()
        #expect(item.isDeleted)
        #expect(project.chores.isEmpty)
        #expect(title.count == 1 && chores.count == 1)
        #expect(name.count == 0)
    }

    @Test func aLocalDeleteNotifiesWhatTheObjectsLoseAndTheEndsThatPointedAtThem() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        let launch = Project(name: "Launch")
        let chore = Chore(title: "doomed", estimate: 1, project: launch)
        let kept = Chore(title: "kept", project: launch)
        context.insert(chore)
        context.insert(kept)
        try context.save()
        chore.estimate = 2
        let title = Tracked { _ = chore.title }
        let estimate = Tracked { _ = chore.estimate }
        let project = Tracked { _ = chore.project }
        let chores = Tracked { _ = launch.chores }
        let keptTitle = Tracked { _ = kept.title }
        let keptProject = Tracked { _ = kept.project }
        context.delete(chore)
        #expect(chore.isDeleted && launch.chores == [kept])
        // Its targets are gone and its pending estimate dropped; its title reads as it did.
        #expect(chore.project == nil && chore.estimate == 1 && chore.title == "doomed")
        #expect(project.count == 1 && estimate.count == 1 && chores.count == 1)
        #expect(title.count == 0)
        #expect(keptTitle.count == 0 && keptProject.count == 0)

        // A cascade: the project and its remaining chore, and an object inserted since the save, which vanishes.
        let fresh = Chore(title: "fresh", project: launch)
        context.insert(fresh)
        let keptProject2 = Tracked { _ = kept.project }
        let keptTitle2 = Tracked { _ = kept.title }
        let freshTitle = Tracked { _ = fresh.title }
        let name = Tracked { _ = launch.name }
        context.delete(launch)
        #expect(kept.isDeleted && fresh.isDeleted)
        #expect(keptProject2.count == 1 && freshTitle.count == 1)
        #expect(keptTitle2.count == 0 && name.count == 0)
    }

    // MARK: Other root contexts, saves, rollbacks, child contexts

    @Test func aRootContextNotifiesWhatItsRefreshBringsWithNoChangeHandler() throws {
        let store = try makeStore()
        let writer = ModelContext(store)
        let reader = ModelContext(store)
        let written = Chore(title: "first", estimate: 1)
        writer.insert(written)
        try writer.save()
        reader.refresh()
        let chore = try #require(reader.model(for: written.objectID!, as: Chore.self))
        let title = Tracked { _ = chore.title }
        let estimate = Tracked { _ = chore.estimate }

        written.title = "second"
        try writer.save()
        #expect(chore.title == "first", "a root context reads its snapshot until it refreshes")
        #expect(title.count == 0)
        reader.refresh()
        #expect(title.count == 1)
        #expect(estimate.count == 0)
        #expect(chore.title == "second")
    }

    @Test func aRootContextThatFellFarBehindComparesItsObjectsAndStillNotifiesExactly() throws {
        let store = try makeStore()
        let reader = ModelContext(store)
        let chore = Chore(title: "first", estimate: 1)
        reader.insert(chore)
        try reader.save()
        let title = Tracked { _ = chore.title }
        let estimate = Tracked { _ = chore.estimate }

        // More change than the reader's inbox holds, then the change to the chore.
        let id = chore.objectID!
        try store.write { tx in
            for i in 0...CommitInbox.heldLimit { _ = try tx.insert("Chore", ["title": .string("bulk \(i)")]) }
        }
        try store.write { tx in try tx.set(id, "title", "second") }
        #expect(reader.observers.inbox?.filed == [], "the inbox dropped the bulk commit and holds nothing more")
        #expect(title.count == 0)
        reader.refresh()
        #expect(chore.title == "second")
        #expect(title.count == 1)
        #expect(estimate.count == 0)
    }

    @Test func aRootContextThatNeverMovesHoldsABoundedInbox() throws {
        let store = try makeStore()
        let idle = ModelContext(store)
        let start = idle.snapshot.sequence
        for _ in 0..<4 {
            try store.write { tx in
                for i in 0..<(CommitInbox.heldLimit / 3) { _ = try tx.insert("Chore", ["title": .string("c\(i)")]) }
            }
        }
        let inbox = try #require(idle.observers.inbox)
        #expect(inbox.filed == [start + 1, start + 2, start + 3], "the fourth commit would pass the limit")
        try store.write { tx in _ = try tx.insert("Chore", ["title": "one more"]) }
        #expect(inbox.filed == [start + 1, start + 2, start + 3], "nothing more is held until the context moves")
        idle.refresh()
        try store.write { tx in _ = try tx.insert("Chore", ["title": "after moving"]) }
        #expect(inbox.filed == [idle.snapshot.sequence + 1], "after the move it holds commits again")
    }

    @Test func aContextsOwnSaveTooBigToHoldLeavesItsInboxHoldingTheCommitsAfterIt() throws {
        let store = try makeStore()
        let importer = ModelContext(store)
        for i in 0...CommitInbox.heldLimit { importer.insert(Chore(title: "imported \(i)")) }
        try importer.save()
        let inbox = try #require(importer.observers.inbox)
        #expect(inbox.filed == [])
        try store.write { tx in _ = try tx.insert("Chore", ["title": "elsewhere"]) }
        #expect(inbox.filed == [importer.snapshot.sequence + 1], "its save took the inbox past what it dropped")
    }

    @Test func aSaveThatBringsInAnotherContextsCommitNotifiesWhatThatCommitChanged() throws {
        let store = try makeStore()
        let mine = ModelContext(store)
        let theirs = ModelContext(store)
        let chore = Chore(title: "first")
        let project = Project(name: "Mine")
        mine.insert(chore)
        mine.insert(project)
        try mine.save()
        let title = Tracked { _ = chore.title }
        let done = Tracked { _ = chore.done }

        theirs.refresh()
        theirs.model(for: chore.objectID!, as: Chore.self)!.title = "theirs"
        try theirs.save()
        project.name = "Mine, renamed"
        try mine.save()
        #expect(chore.title == "theirs")
        #expect(title.count == 1)
        #expect(done.count == 0)
    }

    @Test func rollbackNotifiesThePropertiesThatGoBack() throws {
        let store = try makeStore()
        let context = ModelContext(store)
        let launch = Project(name: "Launch")
        let chore = Chore(title: "saved", project: launch)
        context.insert(chore)
        try context.save()
        chore.title = "pending"
        let doomed = Chore(title: "inserted, then rolled back", project: launch)
        context.insert(doomed)
        let title = Tracked { _ = chore.title }
        let estimate = Tracked { _ = chore.estimate }
        let chores = Tracked { _ = launch.chores }
        let doomedTitle = Tracked { _ = doomed.title }
        context.rollback()
        #expect(chore.title == "saved" && launch.chores == [chore])
        #expect(title.count == 1 && chores.count == 1 && doomedTitle.count == 1)
        #expect(estimate.count == 0)
    }

    @Test func aChildContextsSaveNotifiesTheParentsObjects() throws {
        let store = try makeStore()
        let parent = ModelContext(store)
        let chore = Chore(title: "saved")
        parent.insert(chore)
        try parent.save()
        let title = Tracked { _ = chore.title }
        let estimate = Tracked { _ = chore.estimate }

        let child = ModelContext(parent: parent)
        child.model(for: chore.objectID!, as: Chore.self)!.title = "from the sheet"
        #expect(title.count == 0, "the child's edit is its own until it saves")
        try child.save()
        #expect(chore.title == "from the sheet")
        #expect(title.count == 1)
        #expect(estimate.count == 0)
    }

    // MARK: Helpers

    private func insertTwoChores(_ store: Store) async throws -> (ObjectID, ObjectID) {
        try await store.performBackgroundTask { context in
            let chore = Chore(title: "first", estimate: 1)
            let other = Chore(title: "other", estimate: 1)
            context.insert(chore)
            context.insert(other)
            try context.save()
            return (chore.objectID!, other.objectID!)
        }
    }
}

/// The observers of what `read` reads, counted: `withObservationTracking` calls its handler once, at the first
/// change, on the thread that makes it, so the count says whether (0 or 1) they heard.
final class Tracked: Sendable {
    private let calls = Mutex(0)

    init(_ read: () -> Void) {
        withObservationTracking(read) { [self] in calls.locked { $0 += 1 } }
    }

    var count: Int { calls.locked { $0 } }
}

/// A main-actor object handed to an observation handler that runs on the main actor (checked there).
struct MainActorBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

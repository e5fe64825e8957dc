import Foundation
import Testing
import Trellis

/// The models of "Unique Conflicts and Relationship Bounds" (Trellis.docc/Constraints.md), verbatim.
enum ConstraintsExample {
    final class Tag: Model {
        @Attribute(.unique) var name = ""
        @Attribute var color = ""
    }

    final class Crew: Model {
        @Attribute var name = ""
        @Relationship(minimumCount: 1, maximumCount: 3, inverse: \Sailor.crew) var sailors: [Sailor]
    }

    final class Sailor: Model {
        @Attribute var name = ""
        @Relationship var crew: Crew?
    }

    final class Checklist: Model {
        @Attribute var title = ""
        @Relationship(deleteRule: .cascade, inverse: \Step.checklist, ordered: true) var steps: [Step]
    }

    final class Step: Model {
        @Attribute var text = ""
        @Relationship var checklist: Checklist?
    }
}

extension ConstraintsExample {
    /// The article's examples, run, and its claims checked.
    @Suite struct ConstraintsDocTests {
        @Test func refuseOrUpdate() throws {
            let store = try Store(models: [Tag.self])
            // swift-format-ignore
            do {
                let context = ModelContext(store)
                let home = Tag()
                (home.name, home.color) = ("home", "blue")
                context.insert(home)
                try context.save()

                let again = Tag()
                (again.name, again.color) = ("home", "red")
                context.insert(again)
                do {
                    try context.save()                      // the default, .error: refused, nothing saved
                } catch let error as TrellisError where error.code == .uniqueViolation {
                    print(error.message)                    // Tag#2 breaks the unique constraint on Tag(name): Tag#1 already has ...
                }
                try context.save(onConflict: .update)       // an upsert: Tag#1's color is now "red"
                assert(again.objectID == home.objectID)

                #expect(home.color == "red" && again.objectID == home.objectID)
                let stored = try ModelContext(store).fetch(FetchDescriptor<Tag>())
                #expect(stored.map(\.color) == ["red"])
            }
        }

        @Test func theTransactionChoiceAndTheMergedInserts() throws {
            let store = try Store(models: [Tag.self])
            let home = try store.write { tx in try tx.insert("Tag", ["name": "home", "color": "blue"]) }
            // swift-format-ignore
            do {
                var tx = store.transaction()
                let tag = try tx.insert("Tag", ["name": "home", "color": "green"])
                let commit = try store.commit(tx, onConflict: .update)
                let stored = commit.merged[tag] ?? tag      // the object that now has color "green"

                #expect(stored == home && tag != home)
                #expect(try store.snapshot.value(home, "color") == "green")
                #expect(try store.snapshot.count("Tag") == 1)
            }
        }

        @Test func aBrokenBoundNamesTheObjectRelationshipCountAndBounds() throws {
            let store = try Store(models: [Crew.self, Sailor.self])
            let context = ModelContext(store)
            let crew = Crew()
            context.insert(crew)
            for i in 0..<4 {
                let sailor = Sailor()
                sailor.name = "s\(i)"
                context.insert(sailor)
                crew.sailors.append(sailor)
            }
            let error = #expect(throws: TrellisError.self) { try context.save() }
            #expect(error?.code == .relationshipCount)
            #expect(error?.message == "Crew#1 would have 4 target(s) in 'sailors'; it must have 1...3")
            #expect(context.hasChanges)
            crew.sailors = []
            let none = #expect(throws: TrellisError.self) { try context.save() }
            #expect(none?.message == "Crew#1 would have 0 target(s) in 'sailors'; it must have 1...3")
        }

        // swift-format-ignore
        @Test func anOrderedRelationshipKeepsTheOrderGiven() throws {
            let printed = Printed()
            func print(_ items: Any...) { printed.append(items) }
            let store = try Store(models: [Checklist.self, Step.self])
            let context = ModelContext(store)

            let list = Checklist()
            context.insert(list)
            for text in ["pack", "drive", "unpack"] {
                let step = Step()
                step.text = text
                list.steps.append(step)
            }
            let coffee = Step()
            coffee.text = "coffee"
            list.steps.insert(coffee, at: 0)           // coffee, pack, drive, unpack
            list.steps.swapAt(1, 2)                    // coffee, drive, pack, unpack
            list.steps.remove(at: 3)                   // coffee, drive, pack (unpack stays, on no list)
            try context.save()
            print(list.steps.map(\.text))             // ["coffee", "drive", "pack"]

            #expect(printed.lines == [#"["coffee", "drive", "pack"]"#])
            let fresh = ModelContext(store)
            let stored = try #require(try fresh.fetch(FetchDescriptor<Checklist>()).first)
            #expect(stored.steps.map(\.text) == ["coffee", "drive", "pack"])
            #expect(try fresh.fetchCount(FetchDescriptor<Step>()) == 4)
            let unpack = try fresh.fetch(FetchDescriptor<Step>(predicate: #Predicate { $0.text == "unpack" }))
            #expect(unpack.count == 1 && unpack[0].checklist == nil)

            // Without models: positions in a transaction.
            let id = try #require(stored.objectID)
            var tx = store.transaction()
            try tx.move(id, "steps", from: 2, to: 0)
            _ = try store.commit(tx)
            let texts = try store.snapshot.targets(id, "steps").map { try store.snapshot.value($0, "text") ?? .null }
            #expect(texts == ["pack", "coffee", "drive"])
            var bad = store.transaction()
            try bad.unlink(id, "steps", at: 3)
            #expect(throws: TrellisError.self) { try store.commit(bad) }
        }
    }
}

import Foundation
import Observation
import Synchronization
import Testing
import Trellis

/// The examples of "Observing Models" (Trellis.docc/ObservingModels.md), verbatim, run and checked (see
/// `ReadmeTests` for how). `Chore` is the test module's model. The examples' `print` is this file's, which keeps the
/// lines for the tests to check (an observation handler may run on any thread, hence the lock).
@MainActor @Suite(.serialized) struct ObservingModelsDocTests {
    @Test func theLabelShowsTheTitleAgainEachTimeItChanges() async throws {
        let store = try makeStore()
        let id = try await store.performBackgroundTask { context in
            let chore = Chore(title: "first")
            context.insert(chore)
            try context.save()
            return chore.objectID!
        }
        store.viewContext.refresh()
        let label = TitleLabel(chore: try #require(store.viewContext.model(for: id, as: Chore.self)))
        #expect(label.text == "first")

        try await store.performBackgroundTask { context in
            context.model(for: id, as: Chore.self)!.title = "renamed"
            try context.save()
        }
        #expect(await eventuallyYielding { label.text == "renamed" })

        label.chore.title = "renamed here"
        #expect(await eventuallyYielding { label.text == "renamed here" })
    }

    // swift-format-ignore
    @Test func onlyTheTitlesObserversHearOfTheTitleChange() async throws {
        printedLines.locked { $0 = [] }
        let store = try makeStore()
        let id = try await store.performBackgroundTask { context in
            let chore = Chore(title: "first")
            context.insert(chore)
            try context.save()
            return chore.objectID!
        }
        store.viewContext.refresh()

        let view = store.viewContext
        let chore = view.model(for: id, as: Chore.self)!
        withObservationTracking { _ = chore.title } onChange: { print("the title changes") }
        try await store.performBackgroundTask { context in
            context.model(for: id, as: Chore.self)!.estimate = 3       // another property: nobody hears
            try context.save()
        }
        view.refresh()                     // chore.estimate is 3 now; nothing is printed

        #expect(chore.estimate == 3)
        #expect(printedLines.locked { $0 } == [])

        try await store.performBackgroundTask { context in
            context.model(for: id, as: Chore.self)!.title = "renamed"
            try context.save()
        }
        view.refresh()                     // prints "the title changes"; chore.title is "renamed" from here on

        #expect(printedLines.locked { $0 } == ["the title changes"])
        #expect(chore.title == "renamed")
    }

    /// The example of `Model`'s own documentation.
    // swift-format-ignore
    @Test func theModelDocumentationsExampleHearsOfALocalChange() throws {
        printedLines.locked { $0 = [] }
        let chore = Chore(title: "first")

        withObservationTracking {
            _ = chore.title
        } onChange: {
            print("the title is about to change")
        }

        chore.title = "second"
        #expect(printedLines.locked { $0 } == ["the title is about to change"])
    }
}

// swift-format-ignore
@MainActor final class TitleLabel {
    let chore: Chore                      // held: a context holds its objects weakly
    private(set) var text = ""

    init(chore: Chore) {
        self.chore = chore
        update()
    }

    func update() {
        text = withObservationTracking {
            chore.title
        } onChange: { [weak self] in
            Task { @MainActor in self?.update() }   // runs before the change: read it afterwards
        }
    }
}

/// What this file's examples printed.
private let printedLines = Mutex<[String]>([])

/// The examples' `print`: keeps the line.
private func print(_ items: Any...) {
    let line = items.map { "\($0)" }.joined(separator: " ")
    printedLines.locked { $0.append(line) }
}

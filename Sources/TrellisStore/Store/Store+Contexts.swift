import Dispatch
import Foundation
import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

extension Store {
    /// Opens an empty in-memory store whose schema is derived from model classes (see `Schema(models:)`).
    ///
    /// ```swift
    /// let store = try Store(models: [Project.self, Chore.self])
    /// ```
    /// - Complexity: O(p) for p properties over all classes (each class is reflected once per process).
    public convenience init(models: [Model.Type]) throws {
        self.init(schema: try Schema(models: models))
    }

    /// Opens (or creates) a durable store in `directory` whose schema is derived from model classes.
    ///
    /// ```swift
    /// let store = try Store(directory: url, models: [Project.self, Chore.self])
    /// ```
    public convenience init(directory: URL, models: [Model.Type], options: StoreOptions = StoreOptions()) throws {
        try self.init(directory: directory, schema: try Schema(models: models), options: options)
    }

    /// The context for reading on the main actor: it follows every commit by itself (no merge code) and reports what
    /// changed through `onChange(_:)` and `changes()`. Its fetches read its current snapshot and never wait for a
    /// save; a commit becomes visible to it in one step, the next time the main actor runs after the commit.
    ///
    /// ```swift
    /// @MainActor func reload() throws {
    ///     chores = try store.viewContext.fetch(FetchDescriptor<Chore>(sortBy: [SortDescriptor(\.due)]))
    /// }
    /// ```
    ///
    /// The view context belongs to the main actor, as SwiftData's `mainContext` does. On Linux the main actor runs
    /// on the main thread when the program drains the main queue (an `async` main, `dispatchMain()`, or a UI run
    /// loop); until then, followed commits wait in an inbox and are applied together.
    /// - Complexity: O(1).
    @MainActor public var viewContext: ModelContext {
        if let box = contexts.view.locked({ $0 }) { return box.context }
        let box = ViewContextBox(store: self)
        contexts.view.locked { $0 = box }
        return box.context
    }

    /// Runs `body` with a new root context on a background thread and returns what it returns; save inside it.
    ///
    /// ```swift
    /// try await store.performBackgroundTask { context in
    ///     for i in 0..<100_000 { context.insert(Chore(title: "step \(i)")) }
    ///     try context.save()
    /// }
    /// ```
    /// - Complexity: that of `body`; the caller's actor is free meanwhile.
    public func performBackgroundTask<R: Sendable>(
        _ body: @escaping @Sendable (ModelContext) throws -> R
    ) async throws -> R {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                let context = ModelContext(self)
                continuation.resume(with: Result { try body(context) })
            }
        }
    }

    /// Runs `body` with a new root context on a background thread and returns at once.
    /// - Complexity: O(1) for the caller.
    public func performBackgroundTask(_ body: @escaping @Sendable (ModelContext) -> Void) {
        DispatchQueue.global(qos: .userInitiated).async {
            body(ModelContext(self))
        }
    }
}

/// Per-store state of the typed layer: model bindings to the schema and the view context.
final class StoreContexts: Sendable {
    private let bindings = Mutex<[ObjectIdentifier: EntityBinding]>([:])
    let view = Mutex<ViewContextBox?>(nil)

    /// The binding of a model class to this store's schema, made on first use.
    func binding(for type: Model.Type, schema: Schema) -> EntityBinding {
        let key = ObjectIdentifier(type)
        if let known = bindings.locked({ $0[key] }) { return known }
        let binding: EntityBinding
        do {
            binding = try EntityBinding(ModelMetadata.of(type), schema: schema)
        } catch {
            preconditionFailure("Trellis: \(type) does not match the store's schema (\(error)); open it with models:")
        }
        bindings.locked { $0[key] = binding }
        return binding
    }
}

/// Holds the view context on the main actor and feeds it the store's commits, in order.
///
/// The store calls the observer on the committing thread; it only files the commit in the context's inbox (with its
/// change report, computed there, off the main actor) and schedules one delivery. The delivery moves the context to
/// the newest snapshot and reports every commit filed since, so a burst of commits costs the main actor one step.
/// `refresh()` delivers the same way at once.
@MainActor final class ViewContextBox {
    let context: ModelContext
    private var token: ObservationToken?

    init(store: Store) {
        context = ModelContext(store: store, weak: true)
        let inbox = CommitInbox(after: context.snapshot.sequence, reports: true)
        context.observers.inbox = inbox
        token = store.observe { [weak self] commit in
            if inbox.file(commit) {
                Task { @MainActor [weak self] in self?.context.deliver(newest: nil) }
            }
        }
        // A commit between taking the snapshot and observing would be missed: catch up once.
        context.refresh()
    }
}

import TrellisCore
import TrellisGraph
import TrellisJournal

/// A scratchpad over the store: it reads a snapshot plus its own pending changes, and `save()` commits them.
///
/// ```swift
/// let context = ModelContext(store)
/// let launch = Project(name: "Launch")
/// context.insert(launch)
/// launch.chores = [Chore(title: "Plan")]
/// let open = try context.fetch(FetchDescriptor<Chore>(predicate: #Predicate { !$0.done }))  // sees the new chore
/// try context.save()                                    // one commit
/// ```
///
/// Reads see your own writes: pending inserts and updates are visible, pending deletes (and what their cascades
/// reach) are hidden, in property reads, fetches, counts and aggregates alike. A root context stays on the snapshot it
/// started from until it saves or `refresh()`es (repeatable reads); the store's `viewContext` follows every commit.
///
/// A context and its model objects belong to one thread or actor (they are not `Sendable`); `ObjectID`s cross
/// threads. `save()` detects conflicts optimistically and resolves them by `mergePolicy`.
public final class ModelContext {
    /// The store the context saves to. The view context holds it unowned (the store owns the view context); not weak,
    /// since a weak reference would give the store a side table and every retain and release of it the slow path.
    private let strongStore: Store?
    private unowned let unownedStore: Store
    /// The context a child context saves into; nil for a root context.
    public let parent: ModelContext?
    /// How `save()` resolves conflicts with commits made since this context read the objects it changed.
    public var mergePolicy: MergePolicy = .error
    /// Who this context's saves are made by (as Core Data's `transactionAuthor`): each commit's record stores it,
    /// and the store's history (`Store.history(since:)`) reads it back, so a sync engine can skip its own changes.
    /// nil (the default) for none. A child context's saves carry its root's author.
    public var transactionAuthor: String?

    let pending = PendingChanges()
    /// The snapshot a root context reads; a child context reads its root's.
    private(set) var ownBase: Graph
    private var cachedView: ContextView?
    /// Snapshots this context has read from since its last save, oldest first, and for each changed object the one
    /// it was first changed on: conflict detection compares that version with the newest.
    private(set) var epochs: [Graph]
    private(set) var originEpoch: [ObjectID: Int] = [:]
    var registered: [ObjectID: WeakModel] = [:]
    /// Assignments made to objects after they were deleted ("Chore#3.title"), which `save()` refuses to lose quietly.
    var writesToDeleted: [String] = []
    private var registeredSincePrune = 0
    private var bindings: [ObjectIdentifier: EntityBinding] = [:]
    /// The composite properties the context's objects have used, by their wrapped key path's identity.
    private var compositeProperties: [ObjectIdentifier: AnyCompositeProperty] = [:]
    /// The composite property found last: a loop over objects asks for the same one again and again.
    private var lastCompositeProperty: AnyCompositeProperty?
    /// The buffer an in-place composite change keeps its two values in (see `takeScratch`).
    private var scratch = ScratchBuffer()
    var observers = ChangeObservers()

    /// A root context reading the store's newest snapshot.
    /// - Complexity: O(1).
    public convenience init(_ store: Store) {
        self.init(store: store, weak: false)
    }

    init(store: Store, weak: Bool) {
        self.strongStore = weak ? nil : store
        self.unownedStore = store
        self.parent = nil
        self.ownBase = store.snapshot
        self.epochs = [ownBase]
        // The view context's box files its commits; any other root context follows them quietly, for its objects'
        // observers (see `CommitInbox`).
        guard !weak else { return }
        let inbox = CommitInbox(after: ownBase.sequence, reports: false)
        observers.inbox = inbox
        observers.subscription = store.observe { commit in _ = inbox.file(commit) }
        // A commit published before the store filed for the inbox would be missed: start after it (nothing is
        // registered yet, so nobody needs telling).
        ownBase = store.snapshot
        epochs = [ownBase]
    }

    /// A child context: it reads its parent's view (including the parent's pending changes) plus its own changes;
    /// `save()` pushes its changes into the parent, and dropping it (or `rollback()`) discards them.
    ///
    /// ```swift
    /// let sheet = ModelContext(parent: store.viewContext)
    /// sheet.model(for: id, as: Chore.self)?.title = "Draft"
    /// try sheet.save()          // the view context now has the change pending
    /// ```
    /// - Complexity: O(1).
    public init(parent: ModelContext) {
        self.strongStore = parent.strongStore
        self.unownedStore = parent.unownedStore
        self.parent = parent
        self.ownBase = parent.ownBase
        self.epochs = []
    }

    deinit {
        observers.finish()
        scratch.release()
    }

    /// The store this context saves to.
    /// The view context must not be used once its store is released (that traps).
    public var store: Store { strongStore ?? unownedStore }

    var schema: Schema { ownBase.schema }

    var root: ModelContext { parent?.root ?? self }

    /// The snapshot under this context's view (its root's base).
    /// - Complexity: O(depth) for a child context.
    public var snapshot: Snapshot { root.ownBase }

    /// The base snapshot plus the pending changes of this context and its ancestors.
    var view: ContextView {
        let base = root.ownBase
        if let cached = cachedView, cached.base.sequence == base.sequence { return cached }
        let layers = (parent.map { $0.view.layers } ?? []) + [pending]
        let view = ContextView(base: base, layers: layers)
        cachedView = view
        return view
    }

    /// Whether the context has unsaved inserts, updates, deletes or relationship changes.
    /// - Complexity: O(1).
    public var hasChanges: Bool { !pending.isEmpty || !writesToDeleted.isEmpty }

    /// Whether the object exists in this context's view.
    /// - Complexity: O(depth), a few hash lookups per layer.
    public func exists(_ id: ObjectID) -> Bool { view.exists(id) }

    /// Drops every unsaved change. Objects inserted since the last save no longer exist in the context's view.
    ///
    /// The observers of the properties that go back to their saved values hear of it (see `Model`).
    /// - Complexity: O(1) when no model object is registered; O(c) for c pending changes otherwise.
    public func rollback() {
        var observed = observedChanges()
        if !registered.isEmpty { observed.insert(layer: pending, over: view) }
        notifying(observed) {
            pending.removeAll()
            writesToDeleted.removeAll()
            resetEpochs()
        }
    }

    /// Moves a root context to the store's newest snapshot, keeping its pending changes on top, and reports what the
    /// commits it skips changed to its `onChange(_:)` handlers and `changes()` streams, as the view context reports
    /// the commits it follows. On the view context it is how synchronous code (a command-line tool, a test, code
    /// that never lets the main actor run) brings it up to date at once.
    ///
    /// ```swift
    /// let view = store.viewContext
    /// let token = view.onChange { changes in print(changes.inserted.count, "new") }
    /// try store.write { tx in _ = try tx.insert("Chore", ["title": "from elsewhere"]) }
    /// view.refresh()                  // prints "1 new" now, not when the main actor next runs
    /// ```
    ///
    /// The observers of the context's model objects hear of the properties those commits change (see `Model`).
    /// - Complexity: O(c) for the c changes of the commits skipped; when they were more than the context keeps
    ///   (`onChange(_:)` keeps them all, otherwise 10,000), O(r) for the r objects it holds instead.
    public func refresh() {
        precondition(parent == nil, "Trellis: a child context reads its parent; refresh the root context")
        deliver(newest: store.snapshot)
    }

    /// Makes `snapshot` the base, remembering the old one for the conflict checks of objects changed on it.
    func advance(to snapshot: Graph) {
        guard snapshot.sequence > ownBase.sequence else { return }
        ownBase = snapshot
        cachedView = nil
        if pending.isEmpty { resetEpochs() } else { epochs.append(snapshot) }
    }

    func resetEpochs() {
        epochs = [ownBase]
        originEpoch = [:]
    }

    /// Records, before its first change, which snapshot an object of the layers below was read from.
    func noteOrigin(_ id: ObjectID) {
        guard parent == nil, originEpoch[id] == nil, !pending.isInserted(id) else { return }
        // An update recorded its epoch with its entry; kept here too, since a delete drops the entry.
        if let epoch = pending.updateOrigin(id) {
            originEpoch[id] = epoch
            return
        }
        guard ownBase.contains(id) else { return }
        originEpoch[id] = epochs.count - 1
    }

    /// The epoch a setter's first update of an existing object records with it (`PendingChanges.set`): the current
    /// one for a root context, none for a child.
    var updateEpoch: Int { parent == nil ? epochs.count - 1 : -1 }

    /// The snapshot an object was first changed on (the current base when it has not been changed). A relationship
    /// change or delete noted before an update names the earlier epoch, so `originEpoch` comes first.
    func origin(of id: ObjectID) -> Graph {
        if !originEpoch.isEmpty, let epoch = originEpoch[id] { return epochs[epoch] }
        return pending.updateOrigin(id).map { epochs[$0] } ?? ownBase
    }

    /// Whether every object's origin is the current base: no epoch has been added since the last reset.
    var originsAreBase: Bool { epochs.count == 1 }

    /// What the cached composite leaves of this context's objects are valid for: it changes whenever the view may
    /// change in a way the setters did not write through the caches (a new base, a delete, a rollback, a change in
    /// an ancestor's layer).
    var compositeStamp: UInt64 {
        guard let parent else { return ownBase.sequence &+ pending.foreignVersion }
        var stamp = pending.foreignVersion
        var context: ModelContext? = parent
        while let c = context {
            stamp &+= c.pending.version
            if c.parent == nil { stamp &+= c.ownBase.sequence }
            context = c.parent
        }
        return stamp
    }

    // MARK: Bindings and identity

    /// The entity a model class maps to in this store's schema.
    func binding(for type: Model.Type) -> EntityBinding {
        let key = ObjectIdentifier(type)
        if let known = bindings[key] { return known }
        let binding = store.contexts.binding(for: type, schema: schema)
        bindings[key] = binding
        return binding
    }

    /// The slot of one of `object`'s composite properties, made when the context knows the property (an object of
    /// the same class used it before); nil otherwise.
    @inline(__always)
    func compositeSlot(_ object: Model, _ keyPath: AnyKeyPath) -> CompositeSlot? {
        if let slot = object.compositeSlot(keyPath) { return slot }
        guard let property = compositeProperties[ObjectIdentifier(keyPath)], property.keyPath === keyPath,
            property.entity == object.binding?.entity
        else { return nil }
        return makeSlot(object, property)
    }

    /// Gives `object` a slot for a property the context knows.
    func makeSlot(_ object: Model, _ property: AnyCompositeProperty) -> CompositeSlot {
        let slot = CompositeSlot(property)
        object.compositeSlots.append(slot)
        return slot
    }

    /// A composite property of `object` the context knows, from its slot or, without making one, from the
    /// properties an object of the same class used before; nil otherwise.
    @inline(__always)
    func compositeProperty(_ object: Model, _ keyPath: AnyKeyPath) -> (AnyCompositeProperty, CompositeSlot?)? {
        if let slot = object.compositeSlot(keyPath) { return (slot.property, slot) }
        // A model without composites (a scalar's `+= 1` comes here too) hashes nothing.
        guard !compositeProperties.isEmpty else { return nil }
        let entity = object.binding?.entity
        if let last = lastCompositeProperty, last.keyPath === keyPath, last.entity == entity { return (last, nil) }
        guard let property = compositeProperties[ObjectIdentifier(keyPath)], property.keyPath === keyPath,
            property.entity == entity
        else { return nil }
        lastCompositeProperty = property
        return (property, nil)
    }

    /// A buffer of at least `bytes` bytes aligned to 16, reused from one in-place composite change to the next; nil
    /// while another change holds it (a change nested in one, which then allocates its own). `giveBackScratch()` ends
    /// the use.
    func takeScratch(bytes: Int) -> UnsafeMutableRawPointer? { scratch.take(bytes: bytes) }

    func giveBackScratch() { scratch.inUse = false }

    /// Makes the property and `object`'s slot of a composite the context does not know yet.
    func makeCompositeSlot<V>(
        _ object: Model, _ keyPath: AnyKeyPath, ordinal: Int, codec: any CompositeCodec<V>.Type
    ) -> CompositeSlot {
        let binding = object.binding!
        guard case .composite(let columns) = binding.columns[ordinal] else { preconditionFailure("not a composite") }
        let property = CompositeProperty(
            keyPath: keyPath, entity: binding.entity, ordinal: ordinal, columns: columns, coder: codec.coder)
        compositeProperties[ObjectIdentifier(keyPath)] = property
        let slot = CompositeSlot(property)
        // Another key path object for the same property replaces the slot made under the first.
        object.compositeSlots.removeAll { $0.property.ordinal == ordinal }
        object.compositeSlots.append(slot)
        return slot
    }

    /// Registers a managed object under its ID, forgetting released ones now and then.
    func register(_ object: Model, _ id: ObjectID) {
        registered[id] = WeakModel(object)
        registeredSincePrune += 1
        if registeredSincePrune > max(1024, registered.count) {
            registered = registered.filter { $0.value.object != nil }
            registeredSincePrune = 0
        }
    }
}

/// A registered object, held weakly: the context keeps data, not objects.
struct WeakModel {
    weak var object: Model?

    init(_ object: Model) { self.object = object }
}

/// One reusable allocation (see `ModelContext.takeScratch(bytes:)`).
struct ScratchBuffer {
    private var pointer: UnsafeMutableRawPointer?
    private var bytes = 0
    var inUse = false

    mutating func take(bytes wanted: Int) -> UnsafeMutableRawPointer? {
        guard !inUse else { return nil }
        if bytes < wanted {
            pointer?.deallocate()
            bytes = max(wanted, 256)
            pointer = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 16)
        }
        inUse = true
        return pointer
    }

    func release() { pointer?.deallocate() }
}

import TrellisCore
import TrellisGraph
import TrellisJournal

/// How `ModelContext.save()` resolves conflicts: objects this context changed that a commit since changed too.
///
/// ```swift
/// context.mergePolicy = .mergeByProperty(favoring: .context)
/// try context.save()
/// ```
///
/// Changes to objects nobody else touched are always saved. An object deleted in the store stays deleted under every
/// policy (IDs are never reused); `.error` reports it, the others drop the changes made to it.
public enum MergePolicy: Sendable, Equatable {
    /// Which side wins a property that both changed.
    public enum Side: Sendable, Equatable {
        /// This context's value wins.
        case context
        /// The store's value wins.
        case store
    }

    /// Save nothing and throw a `TrellisError` with code `.conflict` listing every conflict (the default, as in Core
    /// Data). `ModelContext.conflicts()` gives them as values.
    case error
    /// For each conflicting object, drop this context's changes (including a delete): the store's version stands.
    case storeWins
    /// For each conflicting object, write this context's whole version of it (every attribute and to-one
    /// relationship as this context sees it), overwriting what others changed; a delete goes ahead.
    case contextWins
    /// For each conflicting object, property by property: what only this context changed is written, what only the
    /// store changed stays, and a property both changed goes to `favoring`. A delete against an update goes to
    /// `favoring` too.
    case mergeByProperty(favoring: Side)
}

/// One object this context changed that a later commit changed or deleted too.
///
/// ```swift
/// for conflict in context.conflicts() where conflict.kind == .updatedInStore {
///     print(conflict.object, conflict.contextChanges, conflict.storeChanges)   // 2#4 ["title"] ["title", "done"]
/// }
/// ```
public struct SaveConflict: Sendable, Equatable, CustomStringConvertible {
    /// What the other commit did to the object.
    public enum Kind: Sendable, Equatable {
        /// Another commit changed properties of an object this context changed or deleted.
        case updatedInStore
        /// Another commit deleted an object this context changed or links to.
        case deletedInStore
    }

    /// The object in conflict.
    public let object: ObjectID
    /// The name of its entity.
    public let entity: String
    /// Whether the store updated or deleted it.
    public let kind: Kind
    /// The properties this context changed (attributes and to-one relationships); `["(deleted)"]` for a delete.
    public let contextChanges: [String]
    /// The properties the store changed since this context read the object.
    public let storeChanges: [String]

    /// The conflict for people: who changed which properties.
    public var description: String {
        let id = "\(entity)#\(object.serial)"
        switch kind {
        case .deletedInStore:
            return "\(id) was deleted in the store; this context changed \(list(contextChanges))"
        case .updatedInStore:
            return "\(id): this context changed \(list(contextChanges)), the store changed \(list(storeChanges))"
        }
    }

    private func list(_ names: [String]) -> String { names.isEmpty ? "nothing" : names.joined(separator: ", ") }
}

extension TrellisError.Code {
    /// A commit's precondition failed because the newest version changed under it; the saver retries.
    static let staleSnapshot = TrellisError.Code("stale snapshot")
}

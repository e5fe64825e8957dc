import Foundation
import TrellisCore
import TrellisGraph
import TrellisJournal

/// Undoing a saved commit: its inverse change set, committed as a new commit.
extension Store {
    /// Reverts a commit read from the history: its updates get their old values back, its links and unlinks are
    /// reversed, the objects it deleted come back with their IDs, values and links, and the objects it inserted are
    /// deleted. It is one new commit (by `author`), which the history then shows like any other.
    ///
    /// Refused with `.conflict`, naming each property, when a later commit changed what the undo would restore (the
    /// same attribute of the same object, a relationship end it would relink, an object it would delete or relink
    /// that was deleted since); nothing is committed then. A migration, or a commit written in another schema,
    /// cannot be undone (`.invalidArgument`).
    /// - Complexity: reads the history after the commit (to find conflicts), then commits the inverse.
    @discardableResult
    public func undo(_ entry: HistoryTransaction, author: String? = nil) throws -> Commit {
        guard !entry.isMigration else {
            throw TrellisError(.invalidArgument, "commit \(entry.sequence) is a schema migration; it cannot be undone")
        }
        guard entry.schema.fingerprint == schema.fingerprint else {
            throw TrellisError(
                .invalidArgument,
                "commit \(entry.sequence) was written in another schema (a migration came after it); it cannot be "
                    + "undone")
        }
        while true {
            try flush()
            let through = try durableEnd()
            let later = try LaterChanges(self, after: entry, through: through)
            let conflicts = later.conflicts(with: entry.changeSet, schema: schema)
            if !conflicts.isEmpty {
                throw TrellisError(
                    .conflict,
                    "commit \(entry.sequence) cannot be undone: later commits changed what it would restore: "
                        + conflicts.joined(separator: "; "))
            }
            var tx = transaction()
            tx.author = author
            tx.addInverse(of: entry.changeSet)
            tx.checks.append { head in
                guard head.sequence == through else {
                    throw TrellisError(.staleSnapshot, "a commit came in while the undo checked for conflicts")
                }
            }
            do {
                return try commit(tx)
            } catch let error as TrellisError where error.code == .staleSnapshot {
                continue
            }
        }
    }
}

extension ModelContext {
    /// Reverts a saved commit (see `Store.undo(_:author:)`), as this context's `transactionAuthor`, then moves the
    /// context to the new version (as `refresh()` does). A root context without pending changes only: save or roll
    /// back first.
    public func undo(_ entry: HistoryTransaction) throws {
        precondition(parent == nil, "Trellis: undo through the root context")
        guard !hasChanges else {
            throw TrellisError(
                .invalidArgument, "the context has unsaved changes; save or roll them back before undoing a commit")
        }
        try store.undo(entry, author: transactionAuthor)
        refresh()
    }
}

/// What the commits after an undone one changed: properties and objects, with the first commit that did.
struct LaterChanges {
    struct Property: Hashable {
        var object: ObjectID
        var name: String
    }

    var properties: [Property: UInt64] = [:]
    var objects: [ObjectID: UInt64] = [:]
    var deleted: [ObjectID: UInt64] = [:]

    init(_ store: Store, after entry: HistoryTransaction, through: UInt64) throws {
        try store.forEachHistoryEntry(since: entry.token, through: through) { later in
            guard !later.isMigration else {
                throw TrellisError(
                    .invalidArgument,
                    "commit \(entry.sequence) cannot be undone: the schema migrated after it (commit \(later.sequence))"
                )
            }
            note(later)
        }
    }

    private mutating func touch(_ id: ObjectID, _ name: String, _ sequence: UInt64) {
        if properties[Property(object: id, name: name)] == nil {
            properties[Property(object: id, name: name)] = sequence
        }
        if objects[id] == nil { objects[id] = sequence }
    }

    private mutating func note(_ later: HistoryTransaction) {
        let s = later.sequence
        let schema = later.schema
        for update in later.changeSet.updates {
            for change in update.changes {
                touch(update.id, schema.layouts[Int(update.id.entity)].attributes[change.attribute.index].name, s)
            }
        }
        for edit in later.changeSet.edits {
            let rel = schema.layouts[Int(edit.source.entity)].relationships[edit.relationship.index]
            touch(edit.source, rel.name, s)
            touch(edit.target, schema.layouts[Int(rel.target)].relationships[rel.inverse].name, s)
        }
        for delete in later.changeSet.deletes {
            if deleted[delete.id] == nil { deleted[delete.id] = s }
            if objects[delete.id] == nil { objects[delete.id] = s }
            let layout = schema.layouts[Int(delete.id.entity)]
            for (k, targets) in delete.relationships.enumerated() where k < layout.relationships.count {
                let rel = layout.relationships[k]
                for target in targets {
                    touch(target, schema.layouts[Int(rel.target)].relationships[rel.inverse].name, s)
                }
            }
        }
    }

    /// Each property (or object) the inverse of `changes` would write that a later commit changed, described.
    func conflicts(with changes: ChangeSet, schema: Schema) -> [String] {
        var out: [String] = []
        var seen = Set<String>()
        func add(_ text: String) { if seen.insert(text).inserted { out.append(text) } }
        func property(_ id: ObjectID, _ name: String) {
            if let s = deleted[id] {
                add("\(schema.describe(id)) was deleted (commit \(s))")
            } else if let s = properties[Property(object: id, name: name)] {
                add("\(schema.describe(id)).\(name) (commit \(s))")
            }
        }
        for update in changes.updates {
            for change in update.changes {
                property(update.id, schema.layouts[Int(update.id.entity)].attributes[change.attribute.index].name)
            }
        }
        for edit in changes.edits {
            let rel = schema.layouts[Int(edit.source.entity)].relationships[edit.relationship.index]
            property(edit.source, rel.name)
            property(edit.target, schema.layouts[Int(rel.target)].relationships[rel.inverse].name)
        }
        for insert in changes.inserts where objects[insert.id] != nil {
            // Deleting it again would lose what later commits did to it.
            let names = properties.keys.filter { $0.object == insert.id }.map(\.name).sorted()
            let what = names.isEmpty ? "" : " (" + names.joined(separator: ", ") + ")"
            add(
                "\(schema.describe(insert.id)), inserted by this commit, was changed later\(what) (commit \(objects[insert.id]!))"
            )
        }
        for delete in changes.deletes {
            let layout = schema.layouts[Int(delete.id.entity)]
            for (k, targets) in delete.relationships.enumerated() where k < layout.relationships.count {
                let rel = layout.relationships[k]
                for target in targets {
                    property(target, schema.layouts[Int(rel.target)].relationships[rel.inverse].name)
                }
            }
        }
        return out
    }
}

extension Transaction {
    /// Adds the inverse of a resolved change set: deleted objects back (same IDs, values, links), reversed links and
    /// unlinks, old values, and deletes of the inserted objects.
    mutating func addInverse(of changes: ChangeSet) {
        let inserted = Set(changes.inserts.map(\.id))
        for delete in changes.deletes {
            insertPositions.add(delete.id, at: inserts.count)
            inserts.append(ChangeSet.Insert(id: delete.id, values: delete.values))
        }
        for update in changes.updates {
            for change in update.changes { recordUpdate(update.id, change.attribute.index, change.old) }
        }
        // The links the deleted objects had right before they were deleted (after the commit's edits), then the
        // commit's edits undone, newest first, back to the state before it.
        for delete in changes.deletes {
            for (k, targets) in delete.relationships.enumerated() {
                for target in targets { edits.append(.init(.link, source: delete.id, relationship: k, target: target)) }
            }
        }
        for edit in changes.edits.reversed() {
            if edit.kind == .place, let previous = edit.previousPosition {
                // A move: back to where it was.
                edits.append(
                    .init(
                        placing: edit.target, source: edit.source, relationship: edit.relationship, at: previous,
                        previousPosition: nil))
                continue
            }
            let kind: ChangeSet.RelationshipEdit.Kind = edit.kind == .unlink ? .link : .unlink
            if kind == .link && (inserted.contains(edit.source) || inserted.contains(edit.target)) { continue }
            edits.append(.init(kind, source: edit.source, relationship: edit.relationship, target: edit.target))
        }
        for insert in changes.inserts where deleteSet.insert(insert.id).inserted { deletes.append(insert.id) }
    }
}

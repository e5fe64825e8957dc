import TrellisCore
import TrellisGraph
import TrellisJournal

/// Relationship edits: each one updates both ends in the pending changes, so either end reads right before saving.
extension ModelContext {
    private func relationship(_ id: ObjectID, _ rel: Int) -> EntityLayout.RelationshipLayout {
        schema.layouts[Int(id.entity)].relationships[rel]
    }

    /// Sets a to-one relationship (nil clears it).
    func setTarget(_ source: ObjectID, _ rel: Int, _ target: ObjectID?) {
        let current = view.target(source, rel)
        guard current != target else { return }
        noteOrigin(source)
        pending.setLink(source, rel, .toOne(target))
        if let current { detach(current, from: source, rel) }
        if let target { attach(target, to: source, rel) }
    }

    /// Adds `target` to a to-many relationship (at the end of an ordered one).
    func link(_ source: ObjectID, _ rel: Int, _ target: ObjectID) {
        editToMany(source, rel, target, present: true)
        attach(target, to: source, rel)
    }

    /// Removes `target` from a to-many relationship.
    func unlink(_ source: ObjectID, _ rel: Int, _ target: ObjectID) {
        editToMany(source, rel, target, present: false)
        detach(target, from: source, rel)
    }

    /// Ensures `target` is (or is not) among the to-many targets of `id`: in a set, or at the end of an ordered list
    /// (which the pending changes then hold whole).
    private func editToMany(_ id: ObjectID, _ rel: Int, _ target: ObjectID, present: Bool) {
        guard relationship(id, rel).isOrdered else {
            pending.editToMany(id, rel, target, present: present)
            return
        }
        var list = view.targets(id, rel)
        if present {
            guard !list.contains(target) else { return }
            list.append(target)
        } else {
            guard let at = list.firstIndex(of: target) else { return }
            list.remove(at: at)
        }
        pending.setLink(id, rel, .ordered(list))
    }

    /// Makes `source` a target of `target`'s inverse end; a to-one inverse first leaves its previous owner.
    private func attach(_ target: ObjectID, to source: ObjectID, _ rel: Int) {
        let r = relationship(source, rel)
        if relationship(target, r.inverse).isToMany {
            editToMany(target, r.inverse, source, present: true)
            return
        }
        if let previous = view.target(target, r.inverse), previous != source {
            noteOrigin(previous)
            if r.isToMany {
                editToMany(previous, rel, target, present: false)
            } else {
                pending.setLink(previous, rel, .toOne(nil))
            }
        }
        noteOrigin(target)
        pending.setLink(target, r.inverse, .toOne(source))
    }

    /// Removes `source` from `target`'s inverse end.
    private func detach(_ target: ObjectID, from source: ObjectID, _ rel: Int) {
        let r = relationship(source, rel)
        if relationship(target, r.inverse).isToMany {
            editToMany(target, r.inverse, source, present: false)
        } else {
            noteOrigin(target)
            pending.setLink(target, r.inverse, .toOne(nil))
        }
    }
}

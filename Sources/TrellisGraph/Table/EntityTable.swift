import TrellisCore

/// Every object of one entity: leaves of 64 rows in a radix trie keyed by `serial >> 6`, and one ordered tree per
/// index. All mutation is copy-on-write, so a table shared with an older snapshot is copied only along changed paths.
@usableFromInline package struct EntityTable: Sendable {
    package var leaves = SerialTrie<Leaf>()
    package var count = 0
    /// The highest serial ever stored; new serials are allocated above it.
    package var maxSerial: UInt64 = 0
    package var indexes: [IndexTree]

    package init(_ layout: EntityLayout) {
        indexes = layout.indexes.map { IndexTree($0, attributes: layout.attributes) }
    }

    @inline(__always)
    static func split(_ serial: UInt64) -> (leaf: UInt64, row: Int) {
        (serial >> Leaf.shift, Int(serial & Leaf.mask))
    }

    @usableFromInline func contains(_ serial: UInt64) -> Bool {
        let (l, r) = Self.split(serial)
        return leaves[l]?.contains(r) ?? false
    }

    /// The number of targets of a relationship of a live object (0 for none).
    @usableFromInline func targetCount(_ serial: UInt64, _ relationship: Int) -> Int {
        guard let (leaf, r) = locate(serial) else { return 0 }
        return leaf.targetCount(r, relationship)
    }

    /// The leaf and row of a live object.
    func locate(_ serial: UInt64) -> (Leaf, Int)? {
        let (l, r) = Self.split(serial)
        guard let leaf = leaves[l], leaf.contains(r) else { return nil }
        return (leaf, r)
    }

    func value(_ serial: UInt64, _ attribute: Int) -> Value? {
        guard let (leaf, r) = locate(serial) else { return nil }
        return leaf.columns[attribute].value(r)
    }

    /// The values an index holds for a live object, read from its leaf.
    func indexValues(_ index: EntityLayout.IndexLayout, serial: UInt64) -> [Value] {
        guard let (leaf, r) = locate(serial) else { return [] }
        return index.columns.map { leaf.columns[$0].value(r) }
    }

    // MARK: Mutations (callers check existence and types first; these keep rows and indexes in step)

    package mutating func insertRow(_ serial: UInt64, _ values: [Value], layout: EntityLayout) -> Bool {
        let (l, r) = Self.split(serial)
        // New serials ascend, so the newest leaf is the trie's tail: an insert into it copies no trie node.
        let stored = leaves.modifyKeepingTail(l, default: { Leaf(layout) }) { leaf -> Bool in
            if leaf.contains(r) { return false }
            for (c, v) in values.enumerated() where !leaf.columns[c].set(r, v) { return false }
            leaf.present |= 1 << UInt64(r)
            return true
        }
        guard stored else {
            if let leaf = leaves[l], leaf.present == 0 { leaves.removeValue(forKey: l) }
            return false
        }
        count += 1
        maxSerial = max(maxSerial, serial)
        // A row that was not live has no index entries: the new ones are absent from the trees.
        for (i, index) in layout.indexes.enumerated() {
            indexes[i].update(
                index.columns, serial: serial, adding: true, elements: index.isElements, pairs: index.isPairs,
                absent: true
            ) { values[$0] }
        }
        return true
    }

    /// Sets one attribute; returns the old value, or nil when the value does not fit the column.
    mutating func setValue(_ serial: UInt64, _ attribute: Int, _ value: Value, layout: EntityLayout) -> Value? {
        let (l, r) = Self.split(serial)
        var oldIndexValues: [[Value]] = []
        for index in layout.indexes where index.columns.contains(attribute) {
            oldIndexValues.append(indexValues(index, serial: serial))
        }
        let old = leaves.modify(l, default: { Leaf(layout) }) { leaf -> Value? in
            let old = leaf.columns[attribute].value(r)
            return leaf.columns[attribute].set(r, value) ? old : nil
        }
        guard let old, !oldIndexValues.isEmpty, !old.isIdentical(to: value) else { return old }
        var k = 0
        for (i, index) in layout.indexes.enumerated() where index.columns.contains(attribute) {
            let before = oldIndexValues[k]
            k += 1
            indexes[i].update(
                index.columns, serial: serial, adding: false, elements: index.isElements, pairs: index.isPairs
            ) {
                before[index.columns.firstIndex(of: $0)!]
            }
            // The object's one entry in this index was removed just above: the new one is absent.
            indexes[i].update(
                index.columns, serial: serial, adding: true, elements: index.isElements, pairs: index.isPairs,
                absent: true
            ) { c in
                c == attribute ? value : before[index.columns.firstIndex(of: c)!]
            }
        }
        return old
    }

    mutating func removeRow(_ serial: UInt64, layout: EntityLayout) {
        let (l, r) = Self.split(serial)
        guard contains(serial) else { return }
        for (i, index) in layout.indexes.enumerated() {
            let before = indexValues(index, serial: serial)
            indexes[i].update(
                index.columns, serial: serial, adding: false, elements: index.isElements, pairs: index.isPairs
            ) {
                before[index.columns.firstIndex(of: $0)!]
            }
        }
        let empty = leaves.modify(l, default: { Leaf(layout) }) { leaf -> Bool in
            leaf.present &= ~(1 << UInt64(r))
            leaf.clearRow(r)
            return leaf.present == 0
        }
        if empty { leaves.removeValue(forKey: l) }
        count -= 1
    }

    /// Adds `target` to one side of a relationship; for to-one, returns the target it replaced (0 for none).
    package mutating func addTarget(
        _ serial: UInt64, _ relationship: Int, _ target: UInt64, layout: EntityLayout
    ) -> UInt64 {
        let (l, r) = Self.split(serial)
        return leaves.modify(l, default: { Leaf(layout) }) { leaf -> UInt64 in
            if leaf.links[relationship].isOrdered {
                // An ordered list takes a new target at its end (`placeTarget` puts one at a position).
                if !leaf.links[relationship].ordered[r].contains(target) {
                    leaf.links[relationship].ordered[r].insert(target, at: leaf.links[relationship].ordered[r].count)
                }
                return 0
            }
            if leaf.links[relationship].isToMany {
                leaf.links[relationship].many[r][target] = ()
                return 0
            }
            let old = leaf.links[relationship].one[r]
            leaf.links[relationship].one[r] = target
            return old == target ? 0 : old
        }
    }

    mutating func removeTarget(_ serial: UInt64, _ relationship: Int, _ target: UInt64, layout: EntityLayout) {
        let (l, r) = Self.split(serial)
        guard let leaf = leaves[l], leaf.contains(r), leaf.hasTarget(r, relationship, target) else { return }
        leaves.modify(l, default: { Leaf(layout) }) { leaf in
            if leaf.links[relationship].isOrdered {
                leaf.links[relationship].ordered[r].remove(target)
            } else if leaf.links[relationship].isToMany {
                leaf.links[relationship].many[r].removeValue(forKey: target)
            } else {
                leaf.links[relationship].one[r] = 0
            }
        }
    }

    /// Puts `target` at `position` of an ordered relationship of `serial`: inserted there, or moved there when the list
    /// holds it already (`position` is its index after the move). False, changing nothing, when the position is out
    /// of range.
    mutating func placeTarget(
        _ serial: UInt64, _ relationship: Int, _ target: UInt64, at position: Int, layout: EntityLayout
    ) -> Bool {
        let (l, r) = Self.split(serial)
        guard let leaf = leaves[l], leaf.contains(r), leaf.links[relationship].isOrdered else { return false }
        let list = leaf.links[relationship].ordered[r]
        let held = list.contains(target)
        guard position >= 0, position <= list.count - (held ? 1 : 0) else { return false }
        leaves.modify(l, default: { Leaf(layout) }) { leaf in
            if held { leaf.links[relationship].ordered[r].remove(target) }
            leaf.links[relationship].ordered[r].insert(target, at: position)
        }
        return true
    }
}

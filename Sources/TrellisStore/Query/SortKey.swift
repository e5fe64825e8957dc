import Foundation
import TrellisCore
import TrellisGraph
import TrellisJournal

/// One compiled sort key: an attribute of the fetched entity, a direction, and for strings the comparator a
/// `SortDescriptor` asked for (nil: Swift's `<`, the order of the store's indexes).
struct SortKey {
    let attribute: Int
    let ascending: Bool
    let comparator: String.StandardComparator?

    /// Compiles a sort descriptor whose key path names an attribute; nil for anything else (a relationship path, a
    /// computed property), which the fetch then sorts with Foundation on objects.
    init?<T: Model>(_ descriptor: SortDescriptor<T>, binding: EntityBinding) {
        guard let keyPath = descriptor.keyPath, let a = binding.attribute(at: KeyPathProbe.resolve(keyPath, on: T.self))
        else { return nil }
        attribute = a
        ascending = descriptor.order == .forward
        comparator = descriptor.stringComparator.flatMap { $0 == .lexical ? nil : $0 }
    }

    init(attribute: Int, ascending: Bool) {
        self.attribute = attribute
        self.ascending = ascending
        self.comparator = nil
    }

    /// Whether an index on the attribute yields this order (up to ties).
    var followsIndexOrder: Bool { comparator == nil }

    /// Three-way comparison of two values of the key, in the key's direction.
    func compare(_ a: Value, _ b: Value) -> Int {
        var c: Int
        if let comparator, case .string(let s) = a, case .string(let t) = b {
            switch comparator.compare(s, t) {
            case .orderedAscending: c = -1
            case .orderedSame: c = 0
            case .orderedDescending: c = 1
            }
        } else {
            c = Value.compare(a, b)
        }
        return ascending ? c : -c
    }

    /// Orders rows by the keys in turn, then by `ObjectID` so that every order is total and repeatable.
    static func sort(_ rows: inout [(id: ObjectID, keys: [Value])], by keys: [SortKey]) {
        rows.sort { x, y in precedes(x, y, keys) }
    }

    static func precedes(
        _ x: (id: ObjectID, keys: [Value]), _ y: (id: ObjectID, keys: [Value]), _ keys: [SortKey]
    )
        -> Bool
    {
        for (i, key) in keys.enumerated() {
            let c = key.compare(x.keys[i], y.keys[i])
            if c != 0 { return c < 0 }
        }
        return x.id < y.id
    }
}

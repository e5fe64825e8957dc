import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// The new values a transaction (or a context's pending changes) sets on one stored object: the first attribute
/// inline, so that the common update of one attribute allocates nothing beyond the value itself.
struct PendingUpdate: Sendable {
    let id: ObjectID
    private var attribute: Int
    private var value: Value
    private var more: [(attribute: Int, value: Value)] = []

    init(id: ObjectID, attribute: Int, value: Value) {
        self.id = id
        self.attribute = attribute
        self.value = value
    }

    mutating func set(_ attribute: Int, _ value: Value) {
        if attribute == self.attribute {
            self.value = value
        } else if let i = more.firstIndex(where: { $0.attribute == attribute }) {
            more[i].value = value
        } else {
            more.append((attribute, value))
        }
    }

    /// The value set for `attribute`, or nil when it is not set.
    func value(of attribute: Int) -> Value? {
        if attribute == self.attribute { return value }
        guard !more.isEmpty else { return nil }
        return more.first { $0.attribute == attribute }?.value
    }

    /// The attributes set, in ascending order.
    var attributes: [Int] {
        guard !more.isEmpty else { return [attribute] }
        return ([attribute] + more.map(\.attribute)).sorted()
    }

    /// Calls `body` with the attributes set, each once with its last value, in ascending attribute order.
    func forEachValue(_ body: (Int, Value) throws -> Void) rethrows {
        guard !more.isEmpty else { return try body(attribute, value) }
        for (a, v) in ([(attribute, value)] + more).sorted(by: { $0.attribute < $1.attribute }) { try body(a, v) }
    }
}

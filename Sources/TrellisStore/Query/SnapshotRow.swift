import TrellisCore
import TrellisGraph
import TrellisJournal

/// An object of the base snapshot, read attribute by attribute.
struct SnapshotRow: QueryRow {
    let graph: Graph
    let id: ObjectID

    func attribute(_ index: Int) -> Value {
        graph.value(id, AttributeKey(entity: id.entity, index: index)) ?? .null
    }
}

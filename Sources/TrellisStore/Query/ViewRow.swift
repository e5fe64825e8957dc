import TrellisCore
import TrellisGraph
import TrellisJournal

/// An object read through a view (pending changes included).
struct ViewRow: QueryRow {
    let view: ContextView
    let id: ObjectID

    func attribute(_ index: Int) -> Value { view.value(id, index) ?? .null }
}

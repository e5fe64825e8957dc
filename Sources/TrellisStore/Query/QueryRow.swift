import TrellisCore
import TrellisGraph
import TrellisJournal

/// The row a predicate tests: its ID and its attributes.
protocol QueryRow {
    var id: ObjectID { get }
    func attribute(_ index: Int) -> Value
}

extension Row: QueryRow {
    func attribute(_ index: Int) -> Value { value(at: index) }
}

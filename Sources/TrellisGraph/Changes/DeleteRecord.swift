import TrellisCore

/// What a `ChangeSet.Delete` holds of its object.
package enum DeleteRecord: Sendable {
    case given(values: [Value], relationships: [[ObjectID]])
    case row(DeletedRow)

    var values: [Value] {
        switch self {
        case .given(let values, _): values
        case .row(let row): row.values
        }
    }

    var relationships: [[ObjectID]] {
        switch self {
        case .given(_, let relationships): relationships
        case .row(let row): row.relationships
        }
    }

    /// How many targets the object's relationships held.
    var targetCount: Int {
        switch self {
        case .given(_, let relationships): relationships.reduce(0) { $0 + $1.count }
        case .row(let row): row.targetCount
        }
    }
}

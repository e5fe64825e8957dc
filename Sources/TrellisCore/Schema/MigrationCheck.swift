/// A check a migration must pass against the data before it may be committed.
package enum MigrationCheck: Sendable, Equatable {
    /// No object of the entity may hold null in the (required) attribute.
    case noNulls(entity: Int, attribute: Int)
    /// No two objects may share non-null values in the unique index.
    case unique(entity: Int, index: Int)
    /// Every object's relationship must meet the relationship's count bounds.
    case counts(entity: Int, relationship: Int)
}

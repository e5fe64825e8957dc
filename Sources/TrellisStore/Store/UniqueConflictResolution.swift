/// What a commit does when an inserted object holds the values of a unique constraint that another object already
/// holds (Core Data's constraint merge policies, SwiftData's implicit upsert, made an explicit choice).
///
/// ```swift
/// try context.save(onConflict: .update)        // an insert with a taken key updates the object holding it
/// try store.commit(tx, onConflict: .update)    // the same for a transaction
/// ```
public enum UniqueConflictResolution: Sendable, Hashable {
    /// Refuse the commit with `TrellisError.Code.uniqueViolation`, naming both objects (the default).
    case error
    /// Upsert: the inserted object's attribute values replace those of the object that holds its unique values (one
    /// stored before the commit, or inserted earlier in it), its relationship edits and deletes apply to that object,
    /// and its ID stands for that object from then on (`Commit.merged`; a context re-points its model object).
    case update
}

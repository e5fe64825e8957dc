/// Whether a test mutates a collection that nothing else holds, or one whose previous version a hidden copy keeps.
/// Shared runs prove path copying leaves the copy alone; unique runs exercise the in-place paths.
enum Sharing: CaseIterable, Sendable, CustomStringConvertible {
    case unique
    case shared

    var description: String { self == .unique ? "unique" : "shared" }
}

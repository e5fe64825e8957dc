import Foundation
import TrellisCore

/// A position in a store's history: "everything up to and including this commit has been read".
///
/// Save it (it is `Codable`) and pass it to `Store.history(since:)` to read what came after, in this process or a
/// later one. It names the store it came from, so a token from another store is refused instead of silently
/// reading the wrong history.
///
/// ```swift
/// let data = try JSONEncoder().encode(transaction.token)
/// let token = try JSONDecoder().decode(HistoryToken.self, from: data)
/// ```
public struct HistoryToken: Codable, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The sequence number of the last commit read.
    public let sequence: UInt64
    /// The id of the store it belongs to (kept in the store's `HISTORY` file); nil for a store whose history has
    /// no id (read-only, before any writable open asked for one).
    public let storeID: UUID?

    /// A token at `sequence` of the store with id `storeID`.
    public init(sequence: UInt64, storeID: UUID?) {
        self.sequence = sequence
        self.storeID = storeID
    }

    /// Orders tokens of one store by sequence number.
    public static func < (a: HistoryToken, b: HistoryToken) -> Bool { a.sequence < b.sequence }

    /// "sequence 42 of store …".
    public var description: String { "sequence \(sequence) of store \(storeID?.uuidString ?? "without id")" }
}

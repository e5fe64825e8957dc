import TrellisCore
import TrellisGraph
import TrellisJournal

/// A row of a sectioned result: its section and its position in that section.
public struct ResultsIndexPath: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The section's position among the sections.
    public var section: Int
    /// The row's position in its section.
    public var row: Int

    /// A path from its section and row.
    public init(section: Int, row: Int) {
        self.section = section
        self.row = row
    }

    /// Section first, then row.
    public static func < (a: ResultsIndexPath, b: ResultsIndexPath) -> Bool {
        (a.section, a.row) < (b.section, b.row)
    }

    /// `[section, row]`.
    public var description: String { "[\(section), \(row)]" }
}

/// A section of a `FetchedResultsController`: the value its rows share, and where they are.
public struct ResultsSection: Sendable, Equatable {
    /// The value of the section attribute every row of the section holds (`.null` for the one section of a result
    /// that is not sectioned).
    public let value: Value
    /// The rows' positions in the whole result.
    public let range: Range<Int>

    /// The section's title: the value as text (empty for `.null`).
    public var name: String {
        switch value {
        case .null: return ""
        case .string(let s): return s
        default: return "\(value)"
        }
    }

    /// How many rows the section has.
    public var count: Int { range.count }
}

/// What one or more commits changed in a `FetchedResultsController`, in the order a table view applies them.
///
/// Apply them in this order: delete the rows of `deletedRows` and the sources of `movedRows` (paths before the
/// change, highest first), delete `deletedSections` (highest first), insert `insertedSections` (positions after the
/// change, lowest first), then insert the rows of `insertedRows` and the destinations of `movedRows` (paths after
/// the change, lowest first); `updatedRows` changed in place. A table view's batch update takes the same lists as
/// they are (deletes and moves' sources before, inserts and moves' destinations after). Rows of a deleted or
/// inserted section are listed as row deletes or inserts too, as Core Data's fetched results controller lists them.
///
/// ```swift
/// for await change in live.changes() {
///     table.deleteRows(change.deletedRows + change.movedRows.map(\.from))
///     table.deleteSections(change.deletedSections)
///     table.insertSections(change.insertedSections)
///     table.insertRows((change.insertedRows + change.movedRows.map(\.to)).sorted())
///     table.reloadRows(change.updatedRows.map(\.to))
/// }
/// ```
public struct ResultsChanges: Sendable, Equatable, CustomStringConvertible {
    /// A row whose sort or section values changed: it moved.
    public struct Move: Sendable, Equatable {
        /// Where it was, before the change.
        public let from: ResultsIndexPath
        /// Where it is, after the change.
        public let to: ResultsIndexPath
        /// The properties that changed.
        public let properties: Set<String>
    }

    /// A row that changed without moving relative to the others.
    public struct Update: Sendable, Equatable {
        /// Where it was, before the change.
        public let from: ResultsIndexPath
        /// Where it is, after the change (other rows' inserts and deletes may shift it).
        public let to: ResultsIndexPath
        /// The properties that changed.
        public let properties: Set<String>
    }

    /// Sections that lost their last row, by their position before the change, highest first.
    public internal(set) var deletedSections: [Int] = []
    /// Sections that gained their first row, by their position after the change, lowest first.
    public internal(set) var insertedSections: [Int] = []
    /// Rows that left the result, by their path before the change, highest first.
    public internal(set) var deletedRows: [ResultsIndexPath] = []
    /// Rows that entered the result, by their path after the change, lowest first.
    public internal(set) var insertedRows: [ResultsIndexPath] = []
    /// Rows that moved, ordered by their path after the change.
    public internal(set) var movedRows: [Move] = []
    /// Rows that changed in place, ordered by their path after the change.
    public internal(set) var updatedRows: [Update] = []
    /// The commits covered, lowest first.
    public internal(set) var sequences: [UInt64] = []

    init() {}

    /// Whether no row or section changed.
    public var isEmpty: Bool {
        deletedSections.isEmpty && insertedSections.isEmpty && deletedRows.isEmpty && insertedRows.isEmpty
            && movedRows.isEmpty && updatedRows.isEmpty
    }

    /// The counts of each kind.
    public var description: String {
        "sections -\(deletedSections.count) +\(insertedSections.count), rows -\(deletedRows.count) "
            + "+\(insertedRows.count), moved \(movedRows.count), updated \(updatedRows.count) (commits \(sequences))"
    }
}

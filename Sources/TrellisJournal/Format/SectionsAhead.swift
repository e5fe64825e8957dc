import TrellisCore
import TrellisGraph

/// The sections a commit is encoding ahead.
package struct SectionsAhead {
    package var inserts: EncodingAhead?
    package var updates: EncodingAhead?
    package var editsAndDeletes: EncodingAhead?

    package init() {}

    /// Waits for each section started.
    package func wait() -> EncodedSections {
        EncodedSections(
            inserts: inserts?.wait(), updates: updates?.wait(), editsAndDeletes: editsAndDeletes?.wait())
    }
}

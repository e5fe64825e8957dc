import TrellisCore
import TrellisGraph

/// A section of a change record being encoded on another thread.
package typealias EncodingAhead = BackgroundWork<[[UInt8]]>

/// Sections of a change record encoded ahead (see `ChangeSetCodec.encode(_:schema:ahead:)`), each as pieces that
/// follow one another (`ByteWriter.pieces`); nil: encode it there.
package struct EncodedSections {
    package var inserts: [[UInt8]]?
    package var updates: [[UInt8]]?
    package var editsAndDeletes: [[UInt8]]?

    package init(inserts: [[UInt8]]? = nil, updates: [[UInt8]]? = nil, editsAndDeletes: [[UInt8]]? = nil) {
        self.inserts = inserts
        self.updates = updates
        self.editsAndDeletes = editsAndDeletes
    }
}

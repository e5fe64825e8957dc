import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal

/// The bytes the encoders write, pinned: a digest of what each encoder writes for fixed inputs, recorded when the
/// value codec was unified (issue 15). Any change to a byte of the format changes a digest; a deliberate format change
/// records the new digests along with its version bump.
@Suite struct FormatBytesTests {
    /// Change-set payloads of seeded random change sets (every value kind, NaNs and extremes included).
    @Test func changeSetPayloadsAreUnchanged() {
        var random = SeededRandom(seed: 2024)
        var crc: UInt32 = 0
        for round in 0..<200 {
            let changes = PayloadCodecTests.randomChangeSet(&random, size: round % 10 == 0 ? 300 : 10)
            crc = Zlib.crc32(crc, ChangeSetCodec.encode(changes, schema: PayloadCodecTests.schema))
        }
        #expect(crc == Self.changeSets, "digest \(String(crc, radix: 16))")
    }

    /// Schemas (defaults of every kind), file headers, manifests and record frames (stored, not deflated).
    @Test func schemasHeadersManifestsAndFramesAreUnchanged() {
        var crc: UInt32 = 0
        for schema in [JournalWorkload.schema, CheckpointColumnsTests.schema] {
            let bytes = SchemaCodec.encode(schema)
            crc = Zlib.crc32(crc, bytes)
            let header = FileHeader(
                magic: JournalFormat.segmentMagic, id: 3, sequence: 1 << 40, salt: 0x0123_4567_89ab_cdef,
                fingerprint: schema.fingerprint, schemaBytes: bytes)
            crc = Zlib.crc32(crc, header.encoded())
            crc = Zlib.crc32(
                crc,
                RecordFrame.encode(
                    type: .changeSet, payload: bytes, sequence: 77, time: -5, salt: header.salt, compressionLevel: nil))
        }
        let manifest = Manifest(
            generation: 9, fingerprint: 0xfeed_f00d, checkpointSequence: 1234, checkpointBytes: 1 << 33,
            firstSegment: 4, lastSegment: 6)
        crc = Zlib.crc32(crc, manifest.encoded())
        #expect(crc == Self.headers, "digest \(String(crc, radix: 16))")
    }

    /// Checkpoint column chunks and index orders of seeded random graphs. Level 0 makes every section stored (a zlib
    /// stream at level 0 never saves a byte), so the digest does not depend on the zlib build.
    @Test func checkpointChunksAreUnchanged() {
        var crc: UInt32 = 0
        for seed: UInt64 in [1, 2, 3] {
            let graph = CheckpointColumnsTests.randomGraph(seed: seed, rows: 400)
            for (e, layout) in graph.schema.layouts.enumerated() {
                var parts: [CheckpointColumns.Part] = []
                for (key, leaf) in graph.tables[e].leaves {
                    parts.append(CheckpointColumns.Part(key: key, leaf: leaf, mask: leaf.present))
                }
                crc = Zlib.crc32(crc, CheckpointColumns.encode(entity: e, layout: layout, parts: parts, level: 0))
                for i in layout.indexes.indices {
                    guard let places = CheckpointIndexOrder.places(graph.tables[e], index: i) else { continue }
                    crc = Zlib.crc32(
                        crc, CheckpointIndexOrder.encode(entity: e, index: i, places: places, level: 0))
                }
            }
        }
        #expect(crc == Self.checkpoints, "digest \(String(crc, radix: 16))")
    }

    static let changeSets: UInt32 = 0x487b_e75c
    static let headers: UInt32 = 0x9af9_b892
    static let checkpoints: UInt32 = 0x1dd8_ec51
}

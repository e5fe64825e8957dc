import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Checkpoints of format version 1 (row-major chunks) still load, and move to the current version at the next
/// compaction.
extension CheckpointColumnsTests {
    /// A version-1 checkpoint of `graph`, written as the version-1 writer did (row-major chunks of `rowsPerChunk`).
    static func versionOneCheckpoint(_ graph: Graph, rowsPerChunk: Int = 50) -> [UInt8] {
        let salt: UInt64 = 0x5EED
        var out = FileHeader(
            magic: JournalFormat.checkpointMagic, id: 0, sequence: graph.sequence, salt: salt,
            fingerprint: graph.schema.fingerprint, schemaBytes: SchemaCodec.encode(graph.schema), version: 1
        ).encoded()
        var chunkNumber: UInt64 = 0
        func emit(_ type: RecordType, _ payload: [UInt8]) {
            chunkNumber += 1
            out += RecordFrame.encode(
                type: type, payload: payload, sequence: chunkNumber, time: 0, salt: salt, compressionLevel: 6,
                version: 1)
        }
        for (e, layout) in graph.schema.layouts.enumerated() {
            let rows = Array(graph.rows(entity: UInt32(e)))
            for start in stride(from: 0, to: rows.count, by: rowsPerChunk) {
                let chunk = rows[start..<min(start + rowsPerChunk, rows.count)]
                let payload = ByteWriter.bytes { w in
                    w.varint(e)
                    w.varint(chunk.count)
                    for row in chunk {
                        w.varint(row.id.serial)
                        for a in 0..<layout.attributes.count { w.value(row.value(at: a)) }
                        for k in 0..<layout.relationships.count {
                            let targets = row.targetSerials(RelationshipKey(entity: UInt32(e), index: k))
                            w.varint(targets.count)
                            for t in targets { w.varint(t) }
                        }
                    }
                }
                emit(.checkpointRows, payload)
            }
        }
        let footer = ByteWriter.bytes { footer in
            footer.varint(graph.sequence)
            footer.varint(graph.schema.layouts.count)
            for (e, maxSerial) in graph.maxSerials.enumerated() {
                footer.varint(maxSerial)
                footer.varint(graph.count(entity: UInt32(e)))
            }
            footer.varint(chunkNumber)
        }
        emit(.checkpointFooter, footer)
        return out
    }

    @Test func versionOneCheckpointsStillLoad() throws {
        let graph = Self.randomGraph(seed: 9, rows: 400)
        let disk = SimulatedFileLayer()
        try disk.createDirectory("/c")
        let name = JournalFormat.checkpointName(graph.sequence)
        try Self.put(disk, "/c/" + name, Self.versionOneCheckpoint(graph))
        let file = try disk.open("/c/" + name, .read)
        defer { file.close() }
        let loaded = try Checkpoint.load(file, name: name, schema: Self.schema)
        Self.expectEqual(graph, loaded)
    }

    @Test func aVersionOneStoreOpensAndMovesToTheCurrentVersionAtItsNextCompaction() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open()
        try JournalWorkload.run(store, seed: 21, commits: 40)
        try store.compact()
        try JournalWorkload.run(store, seed: 22, commits: 20)
        let expected = store.snapshot
        try store.close()

        // Turn every file into what version 1 wrote: the same segment and manifest bytes with version 1, and the
        // checkpoint in rows.
        let dir = SimulatedFileLayer.storePath
        for name in disk.names() {
            let path = dir + "/" + name
            var bytes = disk.contents(path)!
            if name == JournalFormat.manifestName {
                // Version 1's 72 bytes: no durable sequence, the checksum over bytes 0..<64, 4 reserved bytes.
                bytes = Array(bytes.prefix(64)) + [0, 0, 0, 0, 0, 0, 0, 0]
                bytes[8] = 1
                bytes[12] = 72
                bytes = ByteMutators.setU32(bytes, at: 64, Zlib.crc32(0, bytes[0..<64]))
            } else if let sequence = JournalFormat.checkpointSequence(name) {
                let file = try disk.open(path, .read)
                let graph = try Checkpoint.load(file, name: name, schema: JournalWorkload.schema)
                file.close()
                #expect(graph.sequence == sequence)
                bytes = Self.versionOneCheckpoint(graph, rowsPerChunk: 7)
            } else if JournalFormat.segmentID(name) != nil {
                bytes = ByteMutators.downgraded(bytes, to: 1)
            }
            disk.setContents(path, bytes)
        }
        // The manifest records the checkpoint's size, which its rewrite in rows changed (compared on load since
        // issue 23).
        let manifestPath = dir + "/" + JournalFormat.manifestName
        let checkpointName = try #require(disk.names().first { JournalFormat.checkpointSequence($0) != nil })
        var manifest = disk.contents(manifestPath)!
        let checkpointSize = UInt64(disk.contents(dir + "/" + checkpointName)!.count)
        manifest = ByteMutators.setU64(manifest, at: 40, checkpointSize)
        manifest = ByteMutators.setU32(manifest, at: 64, Zlib.crc32(0, manifest[0..<64]))
        disk.setContents(manifestPath, manifest)
        #expect(
            disk.names().allSatisfy {
                disk.contents(dir + "/" + $0)!.count < 10 || $0 == "LOCK" || disk.contents(dir + "/" + $0)![8] == 1
            })

        let reopened = try disk.open()
        #expect(GraphEquality.differences(expected, reopened.snapshot) == [])
        #expect(reopened.snapshot.invariantViolations() == [])
        try JournalWorkload.run(reopened, seed: 23, commits: 10)
        try reopened.compact()
        let after = reopened.snapshot
        try reopened.close()
        let checkpoint = disk.names().first { JournalFormat.checkpointSequence($0) != nil }!
        #expect(disk.contents(dir + "/" + checkpoint)![8] == UInt8(JournalFormat.version))
        let third = try disk.open()
        #expect(GraphEquality.differences(after, third.snapshot) == [])
        try third.close()
    }

    @Test func aCheckpointOfAFutureVersionIsRefusedByName() throws {
        let graph = Self.randomGraph(seed: 10, rows: 50)
        let (_, bytes) = try Self.writeAndLoad(graph)
        var future = bytes
        future[8] = UInt8(JournalFormat.version + 1)
        future = ByteMutators.fixHeaderChecksum(future)
        let disk = SimulatedFileLayer()
        try disk.createDirectory("/c")
        let name = JournalFormat.checkpointName(graph.sequence)
        try Self.put(disk, "/c/" + name, future)
        let file = try disk.open("/c/" + name, .read)
        defer { file.close() }
        #expect {
            _ = try Checkpoint.load(file, name: name, schema: Self.schema)
        } throws: { error in
            guard let problem = error as? JournalProblem else { return false }
            return problem.kind == .header && problem.message.contains("format version \(JournalFormat.version + 1)")
        }
    }
}

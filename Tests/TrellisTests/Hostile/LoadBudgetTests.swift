import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal

/// Issue 23, item 6: a checkpoint's valid chunks can describe more than a process can hold (width-0 blocks make rows
/// free, a one-letter alphabet makes text free), so a load is charged as it goes and stops, saying so, at a limit;
/// a footer that claims too much stops it before it starts, and chunks that hold more than their footer claims stop
/// at the first one over. `.ci/check-hostile.sh` runs the same through the tool under `ulimit -v`.
@Suite struct LoadBudgetTests {
    /// A graph of `rows` objects with every attribute type, written as a checkpoint; the file's bytes and its name.
    static func checkpoint(rows: Int) throws -> (SimulatedFileLayer, String, Graph) {
        let graph = CheckpointColumnsTests.randomGraph(seed: 21, rows: rows)
        let disk = SimulatedFileLayer()
        try disk.createDirectory("/c")
        _ = try Checkpoint.write(graph, layer: disk, directory: "/c")
        return (disk, "/c/" + JournalFormat.checkpointName(graph.sequence), graph)
    }

    static func load(_ disk: SimulatedFileLayer, _ path: String, _ graph: Graph, limit: Int?) throws -> Graph {
        let file = try disk.open(path, .read)
        defer { file.close() }
        let name = String(path.split(separator: "/").last!)
        return try Checkpoint.loadReporting(file, name: name, schema: graph.schema, budgetLimit: limit).graph
    }

    /// Fails before the fix: a load had no limit but memory itself (and no `budgetLimit` to give it).
    @Test func aLoadStopsAtItsBudgetNamingWhereAndLoadsWithinIt() throws {
        let (disk, path, graph) = try Self.checkpoint(rows: 9_000)
        // The whole graph's charge, measured by a load that fits.
        let loaded = try Self.load(disk, path, graph, limit: Int.max)
        CheckpointColumnsTests.expectEqual(graph, loaded)
        // A tenth of the objects' minimum: the footer alone shows it cannot fit, so nothing is read.
        let each = LoadBudget.objectBytes(
            values: graph.schema.layouts[0].attributes.count, ends: graph.schema.layouts[0].relationships.count)
        let tooSmall = 9_000 * each / 10
        do {
            _ = try Self.load(disk, path, graph, limit: tooSmall)
            Issue.record("a load over its budget succeeded")
        } catch let error as TrellisError {
            #expect(error.code == .tooLarge)
            #expect(error.message.contains("stopped at its footer"), "\(error.message)")
        }
        // Enough for the footer's objects but not for their text and targets: it stops at a chunk, and says which.
        let footerOnly = graph.schema.layouts.indices.reduce(0) { total, e in
            let layout = graph.schema.layouts[e]
            return total + graph.count(entity: UInt32(e))
                * LoadBudget.objectBytes(values: layout.attributes.count, ends: layout.relationships.count)
        }
        do {
            _ = try Self.load(disk, path, graph, limit: footerOnly)
            Issue.record("a load over its budget succeeded")
        } catch let error as TrellisError {
            #expect(error.code == .tooLarge)
            #expect(error.message.contains("chunk"), "\(error.message)")
        }
    }

    /// Fails before the fix: chunks were counted against the footer only after all of them had loaded.
    @Test func chunksHoldingMoreThanTheFooterSaysStopAtTheFirstOneOver() throws {
        let (disk, path, graph) = try Self.checkpoint(rows: 9_000)
        var bytes = disk.contents(path)!
        // Rewrite the footer (the last frame) to claim 100 objects of entity 0, its checksum made right.
        let headerLength = Int(ByteMutators.u32(bytes, 12))
        let salt = (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[32 + $1]) << (8 * UInt64($1)) }
        var offset = headerLength
        var frames: [Int] = []
        while offset < bytes.count {
            frames.append(offset)
            offset += RecordFrame.align(FrameHeader.currentSize + Int(ByteMutators.u32(bytes, offset + 4)))
        }
        let footerAt = frames.last!
        let footer = FrameHeader(bytes[footerAt..<footerAt + FrameHeader.currentSize], version: JournalFormat.version)
        let payload = ByteWriter.bytes { w in
            w.varint(graph.sequence)
            w.varint(graph.tables.count)
            for e in graph.tables.indices {
                w.varint(graph.tables[e].maxSerial)
                w.varint(e == 0 ? 100 : UInt64(graph.tables[e].count))
            }
            w.varint(UInt64(frames.count - 1))
        }
        bytes.removeSubrange(footerAt...)
        bytes += RecordFrame.encode(
            type: .checkpointFooter, payload: payload, sequence: footer.sequence, time: 0, salt: salt,
            compressionLevel: nil)
        disk.setContents(path, bytes)
        do {
            _ = try Self.load(disk, path, graph, limit: nil)
            Issue.record("a checkpoint with more objects than its footer says loaded")
        } catch let problem as JournalProblem {
            #expect(problem.kind == .decode)
            #expect(problem.offset == frames[0], "stopped at the first chunk, which already holds more than 100")
            #expect(problem.message.contains("the footer says 100"), "\(problem.message)")
        }
    }
}

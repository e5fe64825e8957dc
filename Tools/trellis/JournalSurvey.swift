import Foundation
import Trellis

/// One pass over a store's journal that gathers what `info` and `stats` print: per-segment sizes and sequence
/// ranges, record sizes and times, compression, changes per entity, and (when asked) the graph rebuilt from the
/// checkpoint and the records, for object counts.
///
/// The pass goes through `JournalReader`, so it checks every record it counts; damage it meets is kept in
/// `problems` rather than thrown, because a damaged store is exactly the one a developer wants described. Each record
/// is read with the schema it was written with, and a migration record is replayed as one (it counts as a record;
/// its changes are the migration's, not an entity's).
struct JournalSurvey {
    struct Segment {
        var id: UInt64
        var name: String
        var bytes: Int
        var records = 0
        var firstSequence: UInt64?
        var lastSequence: UInt64?
    }

    /// What the records did to one entity's objects. Bytes are the records' sizes shared out among the entities a
    /// record touches, in proportion to its changes to each (a record is compressed whole, not per entity).
    struct EntityTally {
        var inserts = 0
        var updates = 0
        var deletes = 0
        var links = 0
        var storedBytes = 0.0
        var uncompressedBytes = 0.0

        var changes: Int { inserts + updates + deletes + links }
    }

    /// The store's schema: the newest segment's (with the migration history).
    let schema: Schema
    var manifest: JournalReader.ManifestSummary?
    var segments: [Segment] = []
    var records = 0
    var storedBytes = 0
    var uncompressedBytes = 0
    var firstSequence: UInt64?
    var lastSequence: UInt64?
    /// The stored size and time of every record, in order (for the histograms of `stats`).
    var recordSizes: [Int] = []
    var times: [Date] = []
    /// Per entity name, as the record that changed it named the entity (a renamed entity's older changes stay under
    /// its old name).
    var entities: [String: EntityTally] = [:]
    var problems: [JournalProblem] = []
    /// The store as a recovery would rebuild it, when the survey replayed; nil when it did not, or could not.
    var graph: Snapshot?
    /// Objects in the checkpoint alone (when the survey replayed and the checkpoint loaded).
    var checkpointObjects: Int?

    init(_ location: StoreLocation, replay: Bool, console: Console) throws {
        let reader = location.reader
        schema = try reader.schema()
        do {
            manifest = try reader.manifest()
        } catch let problem as JournalProblem {
            problems.append(problem)
        }
        for file in location.files {
            if let id = StoreFileName.segmentID(file.name) {
                segments.append(Segment(id: id, name: file.name, bytes: file.bytes))
            }
        }
        segments.sort { $0.id < $1.id }
        if replay { graph = replayStart(reader) }

        let progress = console.progress("reading records")
        let positions = Dictionary(uniqueKeysWithValues: segments.enumerated().map { ($1.name, $0) })
        let found = try reader.forEachRecord { record in
            count(record, segment: positions[record.file])
            progress.update(records)
            if let current = graph {
                do {
                    graph = try record.applied(to: current)
                } catch {
                    // Recovery would stop here too; counts after this point would be guesses, so there are none.
                    problems.append(
                        JournalProblem(
                            .decode, file: record.file, offset: record.offset, "record \(record.sequence): \(error)"))
                    graph = nil
                }
            }
        }
        progress.finish()
        problems += found
    }

    private mutating func replayStart(_ reader: JournalReader) -> Snapshot? {
        do {
            let graph = try reader.checkpointSnapshot()
            checkpointObjects = graph.objectCount
            return graph
        } catch let problem as JournalProblem {
            problems.append(problem)
        } catch {
            problems.append(JournalProblem(.header, file: ".", offset: 0, "\(error)"))
        }
        return nil
    }

    private mutating func count(_ record: JournalRecord, segment: Int?) {
        records += 1
        storedBytes += record.storedBytes
        uncompressedBytes += record.uncompressedBytes
        firstSequence = firstSequence ?? record.sequence
        lastSequence = record.sequence
        recordSizes.append(record.storedBytes)
        times.append(record.time)
        if let s = segment {
            segments[s].records += 1
            segments[s].firstSequence = segments[s].firstSequence ?? record.sequence
            segments[s].lastSequence = record.sequence
        }
        var touched: [String: EntityTally] = [:]
        let changes = record.changes
        func name(_ id: ObjectID) -> String { record.schema.entityName(of: id) }
        for insert in changes.inserts { touched[name(insert.id), default: EntityTally()].inserts += 1 }
        for update in changes.updates { touched[name(update.id), default: EntityTally()].updates += 1 }
        for delete in changes.deletes { touched[name(delete.id), default: EntityTally()].deletes += 1 }
        for edit in changes.edits { touched[name(edit.source), default: EntityTally()].links += 1 }
        let total = Double(max(1, touched.values.reduce(0) { $0 + $1.changes }))
        for (entity, tally) in touched {
            let share = Double(tally.changes) / total
            var sum = entities[entity, default: EntityTally()]
            sum.inserts += tally.inserts
            sum.updates += tally.updates
            sum.deletes += tally.deletes
            sum.links += tally.links
            sum.storedBytes += share * Double(record.storedBytes)
            sum.uncompressedBytes += share * Double(record.uncompressedBytes)
            entities[entity] = sum
        }
    }

    /// Whether `segment` is one the manifest names (the others are orphans, left by a crash or a compaction).
    func isLive(_ segment: Segment) -> Bool {
        guard let manifest else { return true }
        return segment.id >= manifest.firstSegment && segment.id <= manifest.lastSegment
    }

    /// Uncompressed bytes per stored byte over all records (1 when nothing was compressed).
    var compressionRatio: Double { storedBytes == 0 ? 1 : Double(uncompressedBytes) / Double(storedBytes) }
}

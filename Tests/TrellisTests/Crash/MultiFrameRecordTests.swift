import Foundation
import Synchronization
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Format version 10: a commit whose record is larger than a frame's payload (`StoreOptions.fragmentBytes`) spans
/// several frames, written and recovered atomically. The fragment size is made tiny here (64 or 256 bytes) so that
/// the crash workload's commits of a few hundred bytes each span many frames.
@Suite struct MultiFrameRecordTests {
    typealias X = CrashExpectations

    /// The fragment size of the child processes (`TRELLIS_TEST_FRAGMENT_BYTES`).
    static let childFragments = ["TRELLIS_TEST_FRAGMENT_BYTES": "64"]

    /// A store of the crash workload's commits 1…`commits`, written by a child process with 64-byte fragments and
    /// killed after its last commit (not closed: the manifest claims nothing, so a cut record is a torn tail, what a
    /// crash leaves, not a vanished tail).
    static func crashedStore(_ directory: URL, commits: Int) throws {
        let child = try CrashChild.run(
            ["run", "--dir", directory.path, "--commits", "\(commits)", "--hold"], environment: childFragments,
            killAfter: 20, afterFirstAck: true)
        try #require(child.lines.contains("holding") && child.killed, "\(child.lines)")
    }

    /// The records of the store in `directory`, with their frame counts and extents.
    static func records(_ directory: URL) throws -> [JournalRecord] {
        var records: [JournalRecord] = []
        let problems = try JournalReader(directory: directory).forEachRecord { records.append($0) }
        #expect(problems.isEmpty, "\(problems)")
        return records
    }

    /// The offsets of the frames of `record` in its segment, from the frame headers' stored lengths.
    static func frameOffsets(_ record: JournalRecord, in bytes: [UInt8]) -> [Int] {
        var offsets: [Int] = []
        var at = record.offset
        while at < record.offset + record.frameBytes {
            offsets.append(at)
            let header = FrameHeader(bytes[at..<(at + FrameHeader.currentSize)], version: JournalFormat.version)
            at += header.frameSize
        }
        return offsets
    }

    @Test(
        "a multi-frame commit torn at every frame boundary and in the middle of every frame (header and payload) reopens in another process at the records before it, nothing after, and takes commits"
    )
    func aTornMultiFrameCommitRecoversThePrefixBeforeIt() throws {
        let temporary = TemporaryDirectory()
        let source = temporary.url.appendingPathComponent("source")
        try Self.crashedStore(source, commits: 12)
        let records = try Self.records(source)
        try #require(records.map(\.sequence) == Array(1...12))
        // Every commit of the workload spans several 64-byte frames.
        #expect(records.allSatisfy { $0.frames >= 2 }, "\(records.map(\.frames))")
        let last = records[11]
        let segment = source.appendingPathComponent(last.file)
        let bytes = [UInt8](try Data(contentsOf: segment))
        let frames = Self.frameOffsets(last, in: bytes)
        #expect(frames.count == last.frames && frames.count >= 3)
        // Cuts: at each frame boundary inside the record, in the middle of each frame's header, and in the middle of
        // each frame's payload; each once with the file cut there and once with zeros from there (reserved space).
        var cuts: [Int] = []
        for (k, offset) in frames.enumerated() {
            if k > 0 { cuts.append(offset) }
            let header = FrameHeader(
                bytes[offset..<(offset + FrameHeader.currentSize)], version: JournalFormat.version)
            cuts.append(offset + header.size / 2)
            cuts.append(offset + header.size + max(1, header.storedLength / 2))
        }
        var round = 0
        for cut in cuts {
            for zeroed in [false, true] {
                round += 1
                let copy = temporary.url.appendingPathComponent("copy-\(round)")
                try FileManager.default.copyItem(at: source, to: copy)
                let damaged = Array(bytes[..<cut]) + (zeroed ? [UInt8](repeating: 0, count: bytes.count - cut) : [])
                try Data(damaged).write(to: copy.appendingPathComponent(last.file))
                let problems = try X.problems(copy)
                #expect(
                    problems.map(\.kind) == [.tornTail] && problems.first?.offset == last.offset,
                    "cut at \(cut), zeroed \(zeroed): \(problems)")
                // Another process reopens it (writable: it drops the torn record and appends after record 11), then
                // commits 12 and 13 again.
                let child = try CrashChild.run(
                    ["run", "--dir", copy.path, "--commits", "13"], environment: Self.childFragments)
                #expect(
                    child.lines.first == "opened 11" && child.lines.last == "closed 13",
                    "cut at \(cut), zeroed \(zeroed): \(child.lines)")
                #expect(try X.problems(copy) == [], "cut at \(cut), zeroed \(zeroed)")
                let store = try Store(
                    directory: copy, schema: CrashWorkload.schema, options: StoreOptions(readOnly: true))
                #expect(X.expectPrefix(store.snapshot, acknowledged: 13, "cut at \(cut)") == 13)
                try store.close()
                try FileManager.default.removeItem(at: copy)
            }
        }
        #expect(round == 2 * (3 * frames.count - 1))
    }

    @Test(
        "a child killed after any frame of a multi-frame record, or in the middle of one, leaves a store that reopens in another process with every acknowledged commit and no part of the cut one",
        arguments: [
            ("after-fragment", 0), ("after-fragment", 3), ("after-fragment", 17), ("mid-fragment", 1),
            ("mid-fragment", 9),
        ])
    func aKillBetweenOrInsideFramesLeavesAPrefix(point: String, skip: Int) throws {
        let temporary = TemporaryDirectory()
        let store = temporary.store
        var environment = Self.childFragments
        environment["TRELLIS_CRASH_AT"] = point
        environment["TRELLIS_CRASH_SKIP"] = "\(skip)"
        let killed = try CrashChild.run(["run", "--dir", store.path, "--commits", "12"], environment: environment)
        #expect(killed.killed, "\(killed.lines)")
        let problems = try X.problems(store)
        X.expectOnlyCrashDamage(problems, "\(point) \(skip)")
        let reopened = try CrashChild.run(
            ["run", "--dir", store.path, "--commits", "14"], environment: Self.childFragments)
        let opened = try #require(reopened.opened, "\(reopened.lines)")
        // The record being written when the child died was never acknowledged. Cut inside its frames (a torn tail),
        // it is gone whole; killed after its last frame, it is whole in the page cache, which SIGKILL does not
        // lose, and stays. Either way every acknowledged commit is there.
        let torn = problems.contains { $0.kind == .tornTail }
        #expect(torn || point == "after-fragment", "\(point) \(skip): \(problems)")
        #expect(
            opened == killed.acknowledged + (torn ? 0 : 1),
            "\(point) \(skip): acknowledged \(killed.acknowledged), opened \(opened), \(problems)")
        #expect(reopened.lines.last == "closed 14", "\(reopened.lines)")
        #expect(try X.problems(store) == [])
        let check = try Store(directory: store, schema: CrashWorkload.schema, options: StoreOptions(readOnly: true))
        #expect(X.expectPrefix(check.snapshot, acknowledged: 14) == 14)
        try check.close()
    }

    /// Options with 256-byte fragments and manual compaction.
    static func smallFragments(follow: Bool = false) -> StoreOptions {
        var options = follow ? StoreOptions.follower : StoreOptions(compaction: .manual)
        options.fragmentBytes = 256
        if follow {
            options.followNotifications = false
            options.followPollInterval = 3_600
        }
        return options
    }

    /// A commit of `objects` items with notes of a few hundred bytes: a record of some KiB, many 256-byte frames.
    static func bigCommit(_ store: Store, first: Int, objects: Int) throws -> Commit {
        var tx = store.transaction()
        for n in first..<(first + objects) {
            if n % 10 == 1 { try tx.insert("Folder", ["name": .string("folder \((n - 1) / 10)")]) }
            let item = try tx.insert(
                "Item",
                ["title": .string("item \(n)"), "score": .double(Double(n)), "note": .data(CrashWorkload.note(n))])
            try tx.link(item, "folder", CrashWorkload.folder(holding: n))
        }
        return try store.commit(tx)
    }

    @Test(
        "a multi-frame record round-trips: its follower publishes it whole with its changes, a reopen in another process and after compaction (checkpoint chunks of several frames) shows the same graph, and history lists it"
    )
    func aMultiFrameRecordRoundTripsThroughFollowerReopenAndCompaction() throws {
        let temporary = TemporaryDirectory()
        let directory = temporary.store
        let writer = try Store(directory: directory, schema: CrashWorkload.schema, options: Self.smallFragments())
        let follower = try Store(
            directory: directory, schema: CrashWorkload.schema, options: Self.smallFragments(follow: true))
        #expect(eventually(within: 60) { (follower.follower?.stepsTaken ?? 0) >= 1 })
        let published = Mutex<[Commit]>([])
        let token = follower.observe { commit in published.locked { $0.append(commit) } }
        defer { token.cancel() }
        let first = try Self.bigCommit(writer, first: 1, objects: 40)
        let second = try Self.bigCommit(writer, first: 41, objects: 25)
        let records = try Self.records(directory)
        #expect(records.map(\.sequence) == [1, 2])
        #expect(records.allSatisfy { $0.frames >= 10 }, "\(records.map(\.frames))")
        #expect(records[0].changes.inserts.count == first.changes.inserts.count)
        #expect(try follower.catchUp() == 2)
        let seen = published.locked { $0 }
        #expect(seen.map(\.sequence) == [1, 2] && seen.allSatisfy { !$0.isRefresh })
        #expect(seen.first?.changes.inserts.count == first.changes.inserts.count)
        #expect(seen.last?.changes.inserts.count == second.changes.inserts.count)
        #expect(follower.snapshot.differences(from: writer.snapshot).isEmpty)
        #expect(try writer.history().map(\.sequence) == [1, 2])
        let before = writer.snapshot
        try writer.compact()
        #expect(try follower.catchUp() == 2)
        let third = try Self.bigCommit(writer, first: 66, objects: 12)
        #expect(try follower.catchUp() == 3)
        #expect(published.locked { $0 }.last?.changes.inserts.count == third.changes.inserts.count)
        #expect(follower.snapshot.differences(from: writer.snapshot).isEmpty)
        let written = writer.snapshot
        #expect(before.sequence == 2 && written.sequence == 3)
        try writer.close()
        try follower.close()
        // The checkpoint's chunks are larger than 256 bytes: several frames each. An open in this process reads it
        // and record 3 back to the graph the writer had.
        #expect(try X.problems(directory) == [])
        let here = try Store(directory: directory, schema: CrashWorkload.schema, options: StoreOptions(readOnly: true))
        #expect(here.snapshot.differences(from: written).isEmpty)
        try here.close()
        // Another process reopens it (the crash workload's schema) and commits one more: it must read the checkpoint
        // of several-frame chunks and record 3 of several frames.
        let child = try CrashChild.run(
            ["run", "--dir", directory.path, "--commits", "4"], environment: Self.childFragments)
        #expect(child.lines.first == "opened 3" && child.lines.last == "closed 4", "\(child.lines)")
        let reopened = try Store(
            directory: directory, schema: CrashWorkload.schema, options: StoreOptions(readOnly: true))
        #expect(reopened.snapshot.count(entity: CrashWorkload.itemEntity) == 78)
        #expect(
            reopened.snapshot.object(CrashWorkload.item(40))?.values == written.object(CrashWorkload.item(40))?.values)
        try reopened.close()
    }

    @Test(
        "a format-9 store (golden) takes a commit of several frames: its version-9 segment is rotated first and keeps only single frames, and another process reads the store"
    )
    func aFormatNineStoreRotatesBeforeAMultiFrameRecord() throws {
        let temporary = TemporaryDirectory()
        let directory = temporary.store
        try FileManager.default.createDirectory(at: temporary.url, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: GoldenStoreTests.fixtures.appendingPathComponent("format9-store"), to: directory)
        var options = StoreOptions(compaction: .manual)
        options.fragmentBytes = 64
        let store = try Store(directory: directory, schema: GoldenStore.v2, options: options)
        let long = String(repeating: "a shelf with a long name, ", count: 20)
        try store.write { tx in try tx.set(ObjectID(entity: 0, serial: 1), "name", .string(long)) }
        try store.write { tx in try tx.set(ObjectID(entity: 0, serial: 2), "name", .string("short")) }
        try store.close()
        let records = try Self.records(directory)
        let added = records.suffix(2)
        #expect(added.map(\.sequence) == [34, 35])
        #expect(added.first?.frames ?? 0 >= 5 && added.last?.frames == 1, "\(added.map(\.frames))")
        #expect(added.allSatisfy { $0.file == JournalFormat.segmentName(5) })
        #expect(records.dropLast(2).allSatisfy { $0.frames == 1 && $0.file != JournalFormat.segmentName(5) })
        let old = try Data(contentsOf: directory.appendingPathComponent(JournalFormat.segmentName(4)))
        let new = try Data(contentsOf: directory.appendingPathComponent(JournalFormat.segmentName(5)))
        #expect(old[8] == 9 && new[8] == UInt8(JournalFormat.version))
        #expect(try X.problems(directory) == [])
        let child = try CrashChild.run(["dump", "--dir", directory.path])
        #expect(child.exitStatus == 0 && child.lines.first?.contains("sequence 35") == true, "\(child.lines)")
        #expect(child.lines.contains { $0.contains(long) }, "\(child.lines.prefix(3))")
        let reopened = try Store(directory: directory, schema: GoldenStore.v2, options: StoreOptions(readOnly: true))
        #expect(reopened.snapshot.object(ObjectID(entity: 0, serial: 1))?.values.first == .string(long))
        try reopened.close()
    }

    @Test(
        "replication reads a multi-frame record as one DurableFrame of all its frames, which a receiver checks and decodes whole, and refuses when any frame is damaged"
    )
    func replicationReadsWholeMultiFrameRecords() throws {
        let temporary = TemporaryDirectory()
        let directory = temporary.store
        let writer = try Store(directory: directory, schema: CrashWorkload.schema, options: Self.smallFragments())
        let first = try Self.bigCommit(writer, first: 1, objects: 30)
        let second = try CrashWorkload.commit(31, to: writer)
        let reader = DurableFrameReader(directory: directory.path, after: 0)
        let frames = try reader.next(limit: 10)
        reader.close()
        try writer.close()
        #expect(frames.map(\.sequence) == [1, 2])
        let records = try Self.records(directory)
        #expect(records.map(\.frames).allSatisfy { $0 >= 2 }, "\(records.map(\.frames))")
        for (frame, commit) in zip(frames, [first, second]) {
            // All its frames, as they lie in the segment, without the padding after the last.
            let record = try #require(records.first { $0.sequence == frame.sequence })
            #expect(frame.bytes.count <= record.frameBytes && frame.bytes.count > record.frameBytes - 8)
            let received = try DurableFrame(
                received: frame.bytes, version: frame.version, salt: frame.salt, context: "test")
            #expect(received == frame)
            let (changes, _) = try received.changeSet(schema: CrashWorkload.schema, context: "test")
            #expect(changes.inserts.count == commit.changes.inserts.count)
            #expect(changes.inserts.map(\.values) == commit.changes.inserts.map(\.values))
            for at in [10, frame.bytes.count / 2, frame.bytes.count - 1] {
                var damaged = frame.bytes
                damaged[at] ^= 0x40
                #expect(throws: TrellisError.self) {
                    _ = try DurableFrame(received: damaged, version: frame.version, salt: frame.salt, context: "t")
                }
            }
            #expect(throws: TrellisError.self) {
                _ = try DurableFrame(
                    received: Array(frame.bytes.dropLast(100)), version: frame.version, salt: frame.salt, context: "t")
            }
        }
    }
}

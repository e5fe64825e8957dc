import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

extension CrashExpectations {
    /// A store of transactions 1…`commits` on a simulated disk that was never closed: a power cut after its last
    /// acknowledged (synced) commit, so its manifest claims no record beyond those of its creation, rotations and
    /// compactions. What a crash leaves at its end is a torn tail, not a vanished one.
    static func crashedStore(commits: Int) throws -> SimulatedFileLayer {
        let disk = SimulatedFileLayer()
        let store = try open(disk)
        for n in 1...commits { try CrashWorkload.commit(n, to: store) }
        return disk.crash(.init(data: .dropUnsynced, keepUnsyncedEntries: false))
    }

    /// Rewrites the manifest of a cleanly closed store as if the close had not recorded its last records (durable
    /// sequence 0): the store a crash after those commits leaves, so that damage to its last record is a torn tail,
    /// as the tests that cut a closed store's last record mean it (after a clean close it is a vanished tail, D2).
    static func forgetCleanClose(_ disk: SimulatedFileLayer) throws {
        let path = path(JournalFormat.manifestName)
        var manifest = try Manifest.parse(try #require(disk.contents(path)), file: JournalFormat.manifestName)
        manifest.durableSequence = 0
        disk.setContents(path, manifest.encoded())
    }

    /// As `forgetCleanClose(_:)`, for a store on the real disk.
    static func forgetCleanClose(_ store: URL) throws {
        let url = store.appendingPathComponent(JournalFormat.manifestName)
        var manifest = try Manifest.parse([UInt8](try Data(contentsOf: url)), file: JournalFormat.manifestName)
        manifest.durableSequence = 0
        try Data(manifest.encoded()).write(to: url)
    }
}

/// Cases D2 and D3 of issue 23: the end of the last segment is told apart from a crash artefact. A journal shorter
/// than the manifest says was durable is a vanished tail (D2); a whole last record that fails its checksum without
/// any sign of a torn write is rot (D3). Both are damage, refused by default, kept by salvage. Problem kinds are
/// compared by their names, so these tests also build (and fail) on the code before the fix.
@Suite struct TailDurabilityCrashTests {
    typealias X = CrashExpectations

    /// Checks that every policy but salvage refuses `disk` (read-only or not) naming `kind`, and that salvage opens
    /// it with exactly `kept` records, reports `kind`, and leaves a store that opens normally and takes commits.
    static func expectRefusedThenSalvaged(
        _ disk: SimulatedFileLayer, kind: String, kept: Int, _ context: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        for policy in [StoreOptions.Recovery.tolerateTornTail, .strict] {
            for readOnly in [false, true] {
                // A copy each time: an open that (wrongly) drops the damage must not hide it from the next.
                var options = X.options(disk.copy(), recovery: policy)
                options.readOnly = readOnly
                do {
                    let store = try Store(
                        directory: URL(fileURLWithPath: X.directory), schema: CrashWorkload.schema, options: options)
                    Issue.record(
                        "\(context): opened (\(policy), read-only \(readOnly)) with \(store.snapshot.sequence) records",
                        sourceLocation: sourceLocation)
                    try store.close()
                } catch let error as TrellisError {
                    #expect(
                        error.code == .corrupt && error.message.contains(": \(kind): "), "\(context): \(error)",
                        sourceLocation: sourceLocation)
                }
            }
        }
        let store = try X.open(disk, recovery: .salvage)
        #expect(X.expectPrefix(store.snapshot, acknowledged: kept, context) == kept, sourceLocation: sourceLocation)
        #expect(
            store.recoveryReport?.skipped.map(\.kind.rawValue) == [kind], "\(context)", sourceLocation: sourceLocation)
        try CrashWorkload.commit(kept + 1, to: store)
        try store.close()
        let again = try X.open(disk)
        #expect(
            X.expectPrefix(again.snapshot, acknowledged: kept + 1, context) == kept + 1, sourceLocation: sourceLocation)
        try again.close()
        #expect(try X.problems(disk) == [], "\(context)", sourceLocation: sourceLocation)
    }

    @Test("D2: a tail of a cleanly closed store zeroed or cut at a record boundary is refused as a vanished tail")
    func vanishedTailAfterCleanCloseIsRefused() throws {
        let disk = try X.store(commits: 49)
        let records = try X.records(disk)
        let name = records[48].file
        let bytes = try #require(disk.contents(X.path(name)))
        // Records 41…49 vanish: their frames are zeros (as reserved space is), or the file ends before them.
        let cut = records[40].offset
        let variants = [
            ("zeroed", ByteMutators.zero(bytes, cut..<bytes.count)), ("cut", ByteMutators.truncate(bytes, to: cut)),
        ]
        for (what, damaged) in variants {
            let copy = disk.copy()
            copy.setContents(X.path(name), damaged)
            let problems = try X.problems(copy)
            #expect(problems.map(\.kind.rawValue) == ["vanished tail"], "\(what): \(problems)")
            #expect(problems.first?.file == name && problems.first?.offset == cut, "\(what): \(problems)")
            try Self.expectRefusedThenSalvaged(copy, kind: "vanished tail", kept: 40, "\(what) tail")
        }
    }

    @Test("D2: after a clean close and a compaction too, records are missing only when they end before its manifest")
    func vanishedTailAfterCompactionAndCleanClose() throws {
        // Compacted at 30 (the manifest names the checkpoint and a new segment), then 31…38 committed and closed.
        let disk = try X.store(commits: 38, compactEvery: 30)
        let records = try X.records(disk)
        #expect(records.count == 8 && records.first?.file != nil)
        let name = records[7].file
        let bytes = try #require(disk.contents(X.path(name)))
        let copy = disk.copy()
        copy.setContents(X.path(name), ByteMutators.truncate(bytes, to: records[0].offset))
        #expect(try X.problems(copy).map(\.kind.rawValue) == ["vanished tail"])
        try Self.expectRefusedThenSalvaged(copy, kind: "vanished tail", kept: 30, "segment emptied after compaction")
    }

    @Test("D2: commits after a reopen go past the recorded end; a torn tail after them is still only a torn tail")
    func commitsAfterReopenContinuePastTheRecordedEnd() throws {
        let disk = try X.store(commits: 30)
        let store = try X.open(disk)
        for n in 31...35 { try CrashWorkload.commit(n, to: store) }
        let after = disk.crash(.init(data: .dropUnsynced, keepUnsyncedEntries: false))
        #expect(try X.problems(after) == [])
        let last = try #require(try X.records(after).last)
        let bytes = try #require(after.contents(X.path(last.file)))
        after.setContents(X.path(last.file), ByteMutators.truncate(bytes, to: last.offset + 40))
        #expect(try X.problems(after).map(\.kind) == [.tornTail])
        try CrashDriver.expectRecovery(after, acknowledged: 34, "torn after reopen")
    }

    @Test("D2: across processes: a child closes cleanly, the tail is cut at a record boundary, the next child refuses")
    func vanishedTailAcrossProcesses() throws {
        let temporary = TemporaryDirectory()
        let store = temporary.store
        let first = try CrashChild.run(["run", "--dir", store.path, "--commits", "49"])
        #expect(first.lines.last == "closed 49", "\(first.lines.suffix(3))")
        var offsets: [(file: String, offset: Int)] = []
        _ = try JournalReader(directory: store).forEachRecord { offsets.append(($0.file, $0.offset)) }
        #expect(offsets.count == 49)
        let segment = store.appendingPathComponent(offsets[48].file)
        let handle = try FileHandle(forWritingTo: segment)
        try handle.truncate(atOffset: UInt64(offsets[40].offset))
        try handle.close()

        let refused = try CrashChild.run(["run", "--dir", store.path, "--commits", "49"])
        #expect(refused.exitStatus == 1 && refused.opened == nil, "\(refused.lines)")
        #expect(refused.lines.contains { $0.contains(": vanished tail: ") }, "\(refused.lines)")
        #expect(try X.problems(store).map(\.kind.rawValue) == ["vanished tail"])

        let salvaged = try CrashChild.run(["run", "--dir", store.path, "--commits", "49", "--salvage"])
        #expect(salvaged.opened == 40 && salvaged.lines.last == "closed 49", "\(salvaged.lines.suffix(3))")
        let reopened = try CrashChild.run(["run", "--dir", store.path, "--commits", "49"])
        #expect(reopened.opened == 49 && reopened.lines.last == "closed 49", "\(reopened.lines.suffix(3))")
    }

    /// The last record of a crashed 49-commit journal: its segment, bytes, offset and extent (header + payload).
    static func lastRecord() throws -> (disk: SimulatedFileLayer, name: String, bytes: [UInt8], first: Int, end: Int) {
        let disk = try X.crashedStore(commits: 49)
        let record = try #require(try X.records(disk).last)
        let bytes = try #require(disk.contents(X.path(record.file)))
        let stored = Int(ByteMutators.u32(bytes, record.offset + 4))
        return (disk, record.file, bytes, record.offset, record.offset + FrameHeader.currentSize + stored)
    }

    @Test("D3: one flipped bit in a whole last record, followed by the end or by reserved zeros, is rot")
    func flippedBitInTheLastRecordIsRot() throws {
        let (disk, name, bytes, first, end) = try Self.lastRecord()
        #expect(end <= bytes.count)
        // A bit of the payload's middle, of its sequence number, of its checksum; each with and without reserved
        // zeros after the record.
        let bits = [((first + end) / 2) * 8 + 3, (first + 16) * 8, (first + 1) * 8 + 6]
        for bit in bits {
            for zeros in [0, 4_096] {
                let copy = disk.copy()
                let damaged = ByteMutators.flipBit(bytes, bit) + [UInt8](repeating: 0, count: zeros)
                copy.setContents(X.path(name), damaged)
                let problems = try X.problems(copy)
                #expect(problems.map(\.kind.rawValue) == ["rot"], "bit \(bit): \(problems)")
                #expect(problems.first?.offset == first && problems.first?.file == name)
                try Self.expectRefusedThenSalvaged(copy, kind: "rot", kept: 48, "bit \(bit), \(zeros) zeros")
            }
        }
    }

    /// Fails before the length search: a flip that shortened the length read as a checksum failure with the rest of
    /// the payload after it, one that lengthened it as a frame running past the file: both torn tails, dropped.
    @Test("D3: one flipped bit in the stored length of a whole last record is rot, whichever way it moves the length")
    func flippedBitInTheLastRecordsLengthIsRot() throws {
        let (disk, name, bytes, first, _) = try Self.lastRecord()
        for bit in 0..<32 {
            for zeros in [0, 4_096] {
                let copy = disk.copy()
                let damaged = ByteMutators.flipBit(bytes, (first + 4) * 8 + bit) + [UInt8](repeating: 0, count: zeros)
                copy.setContents(X.path(name), damaged)
                let problems = try X.problems(copy)
                #expect(problems.map(\.kind.rawValue) == ["rot"], "bit \(bit), \(zeros) zeros: \(problems)")
                #expect(problems.first?.offset == first)
                #expect(problems.first?.message.contains("in the length of a whole record") == true)
                if bit == 3 && zeros == 0 {
                    try Self.expectRefusedThenSalvaged(copy, kind: "rot", kept: 48, "length bit \(bit)")
                }
            }
        }
    }

    @Test("D3: a last record cut at any byte over reserved zeros, or missing a sector, stays a torn tail")
    func tornWritesOfTheLastRecordStayTornTails() throws {
        let (disk, name, bytes, first, end) = try Self.lastRecord()
        let sector = SimulatedFileLayer.sectorSize
        // A write that stopped at any byte (a short write, a process killed mid-write), over reserved zeros.
        var damaged: [[UInt8]] = stride(from: first + 1, to: end, by: 7).map {
            ByteMutators.zero(bytes + [UInt8](repeating: 0, count: 512), $0..<(end + 512))
        }
        // One sector of the record never reached the disk (reserved space reads as zeros).
        for start in stride(from: first / sector * sector, to: end, by: sector) {
            damaged.append(ByteMutators.zero(bytes, max(start, first)..<min(start + sector, bytes.count)))
        }
        for (i, variant) in damaged.enumerated() {
            let copy = disk.copy()
            copy.setContents(X.path(name), variant)
            let problems = try X.problems(copy)
            // A cut that zeroes only the record's last (zero) bytes leaves it whole: nothing is torn then.
            #expect(problems.isEmpty || problems.map(\.kind) == [.tornTail], "variant \(i): \(problems)")
            if !problems.isEmpty { try CrashDriver.expectRecovery(copy, acknowledged: 48, "torn variant \(i)") }
        }
    }

    @Test("D3: damage all over a whole last record, with no zero sector and a non-zero last byte, is rot")
    func garbledWholeLastRecordIsRot() throws {
        let disk = try X.crashedStore(commits: 49)
        let records = try X.records(disk)
        let name = records[48].file
        let bytes = try #require(disk.contents(X.path(name)))
        func extentEnd(_ r: (file: String, offset: Int, end: Int)) -> Int {
            r.offset + FrameHeader.currentSize + Int(ByteMutators.u32(bytes, r.offset + 4))
        }
        // Most change sets end in a zero byte (no deletes); the last record here is the last one that does not, the
        // records after it cut off (a crashed store: its manifest claims none of them).
        let record = try #require(records.last { extentEnd($0) - 1 > $0.offset && bytes[extentEnd($0) - 1] != 0 })
        let end = extentEnd(record)
        var tested = 0
        for seed in 0..<8 as Range<UInt64> {
            // A few bytes of the payload garbled; the header (and so the record's length) intact.
            let middle = (record.offset + FrameHeader.currentSize + end) / 2
            let damaged = ByteMutators.garble(
                ByteMutators.truncate(bytes, to: record.end), middle..<(middle + 3), seed: seed)
            guard damaged != ByteMutators.truncate(bytes, to: record.end) else { continue }
            tested += 1
            let copy = disk.copy()
            copy.setContents(X.path(name), damaged)
            let problems = try X.problems(copy)
            #expect(problems.map(\.kind.rawValue) == ["rot"], "seed \(seed): \(problems)")
            #expect(problems.first?.offset == record.offset)
            if seed == 0 {
                let kept = records.firstIndex { $0.offset == record.offset }!
                try Self.expectRefusedThenSalvaged(copy, kind: "rot", kept: kept, "garbled record \(kept + 1)")
            }
        }
        #expect(tested > 4)
    }
}

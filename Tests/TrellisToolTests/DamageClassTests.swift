import Foundation
import Testing

/// `trellis verify` on stores damaged byte by byte: each class of damage is found, named with its file and offset,
/// and makes the exit code 1.
@Suite struct DamageClassTests {
    /// Runs `verify --json` and returns the problems it lists, after checking the exit code and the text form.
    func problems(_ store: URL) throws -> [[String: Any]] {
        let result = try Tool.run(["verify", store.path, "--json"])
        #expect(result.status == 1, "\(result)")
        let json = try result.json()
        #expect(json["clean"] as? Bool == false)
        let text = try Tool.run(["verify", store.path])
        #expect(text.status == 1)
        #expect(text.stdout.contains("problem"), "\(text)")
        return try #require(json["problems"] as? [[String: Any]])
    }

    func expectProblem(_ problems: [[String: Any]], _ kind: String, file: String, offset: Int? = nil) {
        let match = problems.first { $0["class"] as? String == kind && $0["file"] as? String == file }
        #expect(match != nil, "no \(kind) problem in \(file): \(problems)")
        if let offset, let match { #expect(match["offset"] as? Int == offset, "\(match)") }
    }

    @Test func cleanStoreVerifiesWithExitZero() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let result = try Tool.run(["verify", store.path])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("records     6 checked, through sequence 6"))
        #expect(result.stdout.contains("objects     Folder 1, Note 5"))
        #expect(result.stdout.hasSuffix("clean: no problems\n"))
    }

    @Test func tornTailIsReportedAtTheLastRecordsOffset() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let last = try #require(try Fixture.records(store).last)
        try StoreFile.forgetCleanClose(store)
        try StoreFile(store, last.file).truncate(to: last.offset + 20)
        let found = try problems(store)
        expectProblem(found, "torn tail", file: last.file, offset: last.offset)
        #expect(found.count == 1)
        // The other read commands still describe the store, and say it is damaged with exit 1.
        let info = try Tool.run(["info", store.path, "--json"])
        #expect(info.status == 1, "\(info)")
        #expect(try info.json()["problemCount"] as? Int == 1)
        #expect(try info.json()["objectCounts"] as? [String: Int] == ["Folder": 1, "Note": 4])
        let dump = try Tool.run(["dump", store.path])
        #expect(dump.status == 1)
        #expect(dump.stderr.contains("damage: \(last.file) at offset \(last.offset): torn tail"), "\(dump)")
    }

    @Test func flippedPayloadByteIsAChecksumProblem() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let third = try Fixture.records(store)[2]
        try StoreFile(store, third.file).flip(at: third.offset + 40 + 3)
        expectProblem(try problems(store), "checksum", file: third.file, offset: third.offset)
    }

    @Test func impossibleStoredLengthIsALengthProblem() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let third = try Fixture.records(store)[2]
        try StoreFile(store, third.file).setU32(0x7FFF_FFF0, at: third.offset + 4)
        expectProblem(try problems(store), "length", file: third.file, offset: third.offset)
    }

    @Test func frameCutOutOfTheMiddleIsASequenceGap() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let records = try Fixture.records(store)
        try StoreFile(store, records[2].file).cut(at: records[2].offset, count: records[3].offset - records[2].offset)
        let found = try problems(store)
        expectProblem(found, "sequence gap", file: records[2].file, offset: records[2].offset)
        #expect((found.first?["message"] as? String)?.contains("record 4 where 3 was due") == true, "\(found)")
    }

    @Test func frameFromAnotherSegmentIsASaltProblem() throws {
        let store = try Fixture.make(Fixture.newDirectory(), segmentBytes: 1)
        defer { Fixture.cleanUp(store) }
        let records = try Fixture.records(store)
        let (first, fourth) = (records[0], records[3])
        #expect(first.file != fourth.file)
        let donor = try StoreFile(store, first.file).bytes()
        let frame = Array(donor[first.offset..<(first.offset + first.frameBytes)])
        try StoreFile(store, fourth.file).insert(frame, at: fourth.offset)
        expectProblem(try problems(store), "salt", file: fourth.file, offset: fourth.offset)
    }

    @Test func recordTypeThisBuildDoesNotKnowIsAnUnknownTypeProblem() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let third = try Fixture.records(store)[2]
        let file = StoreFile(store, third.file)
        try file.setU8(0x05, at: third.offset + 8)
        try file.resealFrame(at: third.offset)
        expectProblem(try problems(store), "unknown type", file: third.file, offset: third.offset)
    }

    @Test func segmentTheManifestNamesButIsGoneIsAMissingFile() throws {
        let store = try Fixture.make(Fixture.newDirectory(), segmentBytes: 1)
        defer { Fixture.cleanUp(store) }
        let segments = try Fixture.segments(store)
        #expect(segments.count >= 4, "\(segments)")
        try FileManager.default.removeItem(at: store.appendingPathComponent(segments[1]))
        expectProblem(try problems(store), "missing file", file: segments[1], offset: 0)
    }

    @Test func segmentOutsideTheManifestIsAnOrphanFile() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let orphan = "segment-0000000000000099.trj"
        let segment = try #require(try Fixture.segments(store).first)
        try FileManager.default.copyItem(
            at: store.appendingPathComponent(segment), to: store.appendingPathComponent(orphan))
        let found = try problems(store)
        expectProblem(found, "orphan file", file: orphan, offset: 0)
        #expect(found.count == 1)
    }
}

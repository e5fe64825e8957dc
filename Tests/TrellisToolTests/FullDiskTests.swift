import Foundation
import Testing
import Trellis

/// D9 (issue 23, item 9), on a real file system that fills up: a 3 MB tmpfs mounted for the test (CI runs as root;
/// where mounting is refused the test says why and passes without running).
@Suite struct FullDiskTests {
    /// Runs a system command; returns its status and what it printed.
    static func system(_ path: String, _ arguments: [String]) -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do {
            try process.run()
        } catch {
            return (-1, "\(error)")
        }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    /// Writes zeros to `url` until the file system refuses.
    static func fill(_ url: URL) {
        guard FileManager.default.createFile(atPath: url.path, contents: nil),
            let handle = try? FileHandle(forWritingTo: url)
        else { return }
        defer { try? handle.close() }
        let chunk = Data(count: 4096)
        while (try? handle.write(contentsOf: chunk)) != nil {}
    }

    static func notes(_ store: URL) throws -> Int {
        let reader = try Store(directory: store, schema: Fixture.schema, options: StoreOptions(readOnly: true))
        return try reader.snapshot.count("Note")
    }

    @Test(
        "D9: on a full 3 MB tmpfs a commit is refused, what was acknowledged reads without space, and neither a writable open nor repair leaves a partial file"
    )
    func aFullDiskRefusesCleanlyAndLeavesNothingBehind() throws {
        let mount = Fixture.newDirectory("mnt")
        try FileManager.default.createDirectory(at: mount, withIntermediateDirectories: true)
        defer { Fixture.cleanUp(mount) }
        let mounted = Self.system("/bin/mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", mount.path])
        guard mounted.status == 0 else {
            print("FullDiskTests: skipped, mounting a tmpfs was refused: \(mounted.output)")
            return
        }
        defer { _ = Self.system("/bin/umount", [mount.path]) }
        let store = mount.appendingPathComponent("store")

        // Commits of about 100 KB each until the disk is full: the failing one is refused, the others acknowledged.
        let writer = try Store(directory: store, schema: Fixture.schema, options: StoreOptions(compaction: .manual))
        var acknowledged = 0
        var refusal: TrellisError?
        while refusal == nil && acknowledged < 200 {
            let title = (0..<2_800).map { _ in UUID().uuidString }.joined().prefix(100_000)
            do {
                try writer.write { tx in _ = try tx.insert("Note", ["title": .string(String(title)), "stars": 1]) }
                acknowledged += 1
            } catch let error as TrellisError {
                refusal = error
            }
        }
        #expect(refusal?.message.contains("No space left") == true, "\(String(describing: refusal))")
        #expect(acknowledged > 5)
        _ = try? writer.close()
        #expect(try Self.notes(store) == acknowledged)

        // A torn last record (what a crash leaves), then not one free byte.
        let last = try #require(try Fixture.records(store).last)
        let segment = try FileHandle(forWritingTo: store.appendingPathComponent(last.file))
        try segment.truncate(atOffset: UInt64(last.offset + 20))
        try segment.close()
        Self.fill(mount.appendingPathComponent("filler"))
        let before = try FileManager.default.contentsOfDirectory(atPath: store.path).sorted()

        // Reading needs no space.
        #expect(try Self.notes(store) == acknowledged - 1)
        let verify = try Tool.run(["verify", store.path])
        #expect(verify.status == 1 && verify.stdout.contains("torn tail"), "\(verify)")

        // A writable open must back the torn tail up first: it refuses, says what to do, and leaves no partial backup.
        #expect {
            try Store(directory: store, schema: Fixture.schema)
        } throws: { error in
            let message = (error as? TrellisError)?.message ?? ""
            return message.contains("torn tail") && message.contains("read-only")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.path).sorted() == before)

        // A repair that cannot back up says how to proceed and leaves nothing behind.
        let repair = try Tool.run(["repair", store.path, "--truncate-tail", "--yes"])
        #expect(repair.status != 0, "\(repair)")
        #expect(repair.stderr.contains("--backup DIR"), "\(repair)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: mount.path).sorted() == ["filler", "store"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.path).sorted() == before)
        #expect(try Self.notes(store) == acknowledged - 1)

        // With the backup on another disk, the same repair works on the full one: the copy and the dropped tail's
        // backup go there, and the store is truncated in place.
        let elsewhere = Fixture.newDirectory("backup")
        defer { Fixture.cleanUp(elsewhere) }
        let repaired = try Tool.run(["repair", store.path, "--truncate-tail", "--yes", "--backup", elsewhere.path])
        #expect(repaired.status == 0, "\(repaired)")
        #expect(repaired.stdout.contains("clean: no problems"), "\(repaired)")
        #expect(try Self.notes(store) == acknowledged - 1)
        let copied = try FileManager.default.contentsOfDirectory(atPath: elsewhere.path)
        #expect(copied.contains { $0.hasPrefix("torn-") && $0.hasSuffix(".bak") }, "\(copied)")
        #expect(copied.contains("MANIFEST"), "\(copied)")
        #expect(
            !(try FileManager.default.contentsOfDirectory(atPath: store.path)).contains { $0.hasSuffix(".bak") })
    }
}

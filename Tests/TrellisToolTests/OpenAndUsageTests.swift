import Foundation
import Testing
import Trellis

/// Exit code 3 when a store cannot be opened (missing, not a store, locked by a writer) and 2 for a wrong command
/// line, each with a message that says what is wrong; `--help` everywhere.
@Suite struct OpenAndUsageTests {
    @Test func compactRefusesWithExitThreeWhileAWriterHoldsTheStore() throws {
        let directory = Fixture.newDirectory()
        defer { Fixture.cleanUp(directory) }
        // The writer is the store's first and only open in this process: closing a store and reopening it at once,
        // while other tests spawn processes, can find the lock still held by a child between fork and exec.
        let writer = try Store(directory: directory, schema: Fixture.schema)
        try writer.write { tx in _ = try tx.insert("Folder", ["name": "Inbox"]) }
        let result = try Tool.run(["compact", directory.path])
        #expect(result.status == 3, "\(result)")
        #expect(result.stderr.contains("another process holds it open for writing"), "\(result)")
        #expect(result.stderr.contains("process \(getpid())"), "\(result)")
        #expect(result.stdout.isEmpty)
        // Reading needs no lock: info works beside the live writer, and the writer is untouched.
        let info = try Tool.run(["info", directory.path])
        #expect(info.status == 0, "\(info)")
        try writer.write { tx in _ = try tx.insert("Folder", ["name": "still writable"]) }
        try writer.close()
    }

    @Test func missingPathExitsThreeForEveryStoreCommand() throws {
        let missing = Fixture.newDirectory("nowhere").path
        for command in ["info", "verify", "dump", "stats", "export", "compact"] {
            let result = try Tool.run([command, missing])
            #expect(result.status == 3, "\(command): \(result)")
            #expect(result.stderr.contains("No such file or directory"), "\(command): \(result)")
        }
        #expect(try Tool.run(["history", missing, "Note#1"]).status == 3)
        #expect(try Tool.run(["find", missing, "Note"]).status == 3)
        #expect(try Tool.run(["repair", missing, "--truncate-tail", "--yes"]).status == 3)
        #expect(!FileManager.default.fileExists(atPath: missing), "compact must not create a store")
    }

    @Test func directoryThatIsNotAStoreExitsThree() throws {
        let empty = Fixture.newDirectory("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { Fixture.cleanUp(empty) }
        let result = try Tool.run(["info", empty.path])
        #expect(result.status == 3)
        #expect(result.stderr.contains("is not a Trellis store"), "\(result)")
    }

    @Test func badArgumentsExitTwoWithAMessage() throws {
        let store = try Fixture.make(Fixture.newDirectory())
        defer { Fixture.cleanUp(store) }
        let cases: [([String], String)] = [
            ([], "usage: trellis <command>"),
            (["frobnicate"], "unknown command 'frobnicate'"),
            (["info"], "missing STORE"),
            (["info", store.path, "--bogus"], "unknown option '--bogus'"),
            (["info", store.path, "extra"], "unexpected argument 'extra'"),
            (["dump", store.path, "--from", "abc"], "--from takes a whole number"),
            (["dump", store.path, "--from", "5", "--to", "2"], "--from 5 is after --to 2"),
            (["dump", store.path, "--entity", "Nope"], "the store has no entity 'Nope'"),
            (["export", store.path, "--entity", "Nope"], "the store has no entity 'Nope'"),
            (["find", store.path, "Nope"], "the store has no entity 'Nope'"),
            (["find", store.path, "Note", "--where", "stars >"], "expected a value"),
            (["history", store.path], "missing OBJECT-ID"),
            (["history", store.path, "Note-1"], "is not an object ID"),
            (["repair", store.path], "say either --truncate-tail or --salvage"),
            (["repair", store.path, "--truncate-tail", "--salvage"], "say either --truncate-tail or --salvage"),
            (["demo", "--items", "0"], "--items takes a whole number of at least 1"),
            (["migrate", store.path], "missing --to SCHEMA.json"),
            (["migrate", "--to"], "--to needs a value"),
            (["publish", store.path], "missing NATS-URL"),
            (
                ["publish", store.path, "nats://127.0.0.1:4222", "s", "--commits", "0"],
                "--commits takes a whole number"
            ),
        ]
        for (arguments, message) in cases {
            let result = try Tool.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result)")
            #expect(result.stderr.contains(message), "\(arguments): \(result)")
            #expect(result.stdout.isEmpty, "\(arguments): \(result)")
        }
    }

    @Test func everyCommandAnswersHelpWithItsUsageAndExitZero() throws {
        let top = try Tool.run(["--help"])
        #expect(top.status == 0)
        let commands = [
            "info", "verify", "dump", "history", "find", "export", "schema-diff", "migrate", "compact", "repair",
            "stats", "replica", "publish", "demo",
        ]
        for command in commands {
            #expect(top.stdout.contains("  \(command) "), "\(command) missing from --help")
            let result = try Tool.run([command, "--help"])
            #expect(result.status == 0, "\(command): \(result)")
            #expect(result.stdout.hasPrefix("usage: trellis \(command)"), "\(command): \(result)")
        }
    }
}

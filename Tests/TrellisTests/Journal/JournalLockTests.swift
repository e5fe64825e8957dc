import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// One writer per store directory: a second writer, in this process or another, gets a clear `.locked` error;
/// read-only opens take no lock.
@Suite struct JournalLockTests {
    @Test func aSecondWriterInTheSameProcessIsRefusedAndReadOnlyOpensAreAllowed() throws {
        let temporary = TemporaryDirectory()
        let schema = JournalWorkload.schema
        let writer = try Self.openWriter(temporary.store, schema)
        var tx = writer.transaction()
        try tx.insert("Tag", ["label": "one"])
        try writer.commit(tx)

        let error = try #require(throws: TrellisError.self) { try Store(directory: temporary.store, schema: schema) }
        #expect(error.code == .locked)
        #expect(error.message.contains("locked by another writer (process \(getpid()))"))
        #expect(error.message.contains("readOnly"))

        let reader = try Store(directory: temporary.store, schema: schema, options: StoreOptions(readOnly: true))
        #expect(try reader.snapshot.count("Tag") == 1)
        var refused = reader.transaction()
        try refused.insert("Tag", ["label": "two"])
        #expect(throws: TrellisError.self) { try reader.commit(refused) }
        try reader.close()

        try writer.close()
        let next = try Self.openWriter(temporary.store, schema)
        #expect(try next.snapshot.count("Tag") == 1)
        try next.close()
    }

    /// The lock is an `flock` on the store's LOCK file, so any other process's `flock` sees it: here `flock(1)`
    /// stands in for a second Trellis process in both directions. (A test that runs a second Trellis writer process
    /// belongs with the `trellis` tool, which the crash suite will build on.)
    /// A child this process forks holds the lock of a store it just closed until the child execs; a writer opening
    /// in that moment waited for nothing and was refused as if another process wrote the store (seen in the crash
    /// suite's long mode, where children are spawned all the time). A lock that comes free within a quarter of a
    /// second is now waited for.
    @Test func aLockThatComesFreeAMomentLaterIsWaitedFor() throws {
        let temporary = TemporaryDirectory()
        let schema = JournalWorkload.schema
        try Self.openWriter(temporary.store, schema).close()
        // Another open file description holds the lock, as a forked child's copy of the descriptor would.
        let lockPath = temporary.store.appendingPathComponent("LOCK").path
        let held = open(lockPath, O_RDWR)
        try #require(held >= 0 && flock(held, LOCK_EX | LOCK_NB) == 0)
        let release = Thread {
            usleep(50_000)
            close(held)
        }
        release.start()
        let store = try Store(directory: temporary.store, schema: schema)
        try store.close()
        #expect(eventually { release.isFinished })
    }

    @Test func theLockExcludesOtherProcesses() throws {
        // util-linux's flock(1) is on every Debian system; without it the test fails rather than passing unseen.
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/flock"), "flock(1) is missing")
        let temporary = TemporaryDirectory()
        let schema = JournalWorkload.schema
        let lockPath = temporary.store.appendingPathComponent("LOCK").path
        let store = try Self.openWriter(temporary.store, schema)
        // Another process cannot take the lock while this store holds it.
        #expect(try Self.run("/usr/bin/flock", ["-n", lockPath, "true"]) != 0)
        try store.close()
        #expect(try Self.run("/usr/bin/flock", ["-n", lockPath, "true"]) == 0)

        // While another process holds it, opening for writing fails with `.locked`.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        holder.arguments = [lockPath, "sleep", "3"]
        try holder.run()
        defer {
            holder.terminate()
            holder.waitUntilExit()
        }
        // Wait until the holder has the lock (a third process's non-blocking try fails), then open once.
        var held = false
        for _ in 0..<200 where !held {
            held = try Self.run("/usr/bin/flock", ["-n", lockPath, "true"]) != 0
            if !held { Thread.sleep(forTimeInterval: 0.01) }
        }
        #expect(held)
        var refused: TrellisError?
        do {
            try Store(directory: temporary.store, schema: schema).close()
        } catch let error as TrellisError {
            refused = error
        }
        #expect(refused?.code == .locked)
        #expect(refused?.message.contains("only one process may write a store at a time") == true)
    }

    /// Opens a writer, retrying briefly while the lock is busy: other tests in this process spawn children, and a
    /// child holds duplicates of our descriptors (the lock's among them) from fork until exec closes them.
    static func openWriter(_ url: URL, _ schema: Schema) throws -> Store {
        var attempt = 0
        while true {
            do {
                return try Store(directory: url, schema: schema)
            } catch let error as TrellisError where error.code == .locked && attempt < 100 {
                attempt += 1
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
    }

    static func run(_ tool: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}

import Foundation
import Testing

@testable import Trellis

/// One writer per store directory: a second writer, in this process or another, gets a clear `.locked` error;
/// read-only opens take no lock.
@Suite struct JournalLockTests {
    @Test func aSecondWriterInTheSameProcessIsRefusedAndReadOnlyOpensAreAllowed() throws {
        let temporary = TemporaryDirectory()
        let schema = JournalWorkload.schema
        let writer = try Store(directory: temporary.store, schema: schema)
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
        let next = try Store(directory: temporary.store, schema: schema)
        #expect(try next.snapshot.count("Tag") == 1)
        try next.close()
    }

    /// The lock is an `flock` on the store's LOCK file, so any other process's `flock` sees it: here `flock(1)`
    /// stands in for a second Trellis process in both directions. (A test that runs a second Trellis writer process
    /// belongs with the `trellis` tool, which the crash suite will build on.)
    @Test func theLockExcludesOtherProcesses() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/flock") else { return }
        let temporary = TemporaryDirectory()
        let schema = JournalWorkload.schema
        let lockPath = temporary.store.appendingPathComponent("LOCK").path
        let store = try Store(directory: temporary.store, schema: schema)
        // Another process cannot take the lock while this store holds it.
        #expect(try Self.run("/usr/bin/flock", ["-n", lockPath, "true"]) != 0)
        try store.close()
        #expect(try Self.run("/usr/bin/flock", ["-n", lockPath, "true"]) == 0)

        // While another process holds it, opening for writing fails with `.locked`.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        holder.arguments = [lockPath, "sleep", "2"]
        try holder.run()
        defer {
            holder.terminate()
            holder.waitUntilExit()
        }
        var refused: TrellisError?
        for _ in 0..<100 {
            do {
                let s = try Store(directory: temporary.store, schema: schema)
                try s.close()
                Thread.sleep(forTimeInterval: 0.02)
            } catch let error as TrellisError {
                refused = error
                break
            }
        }
        #expect(refused?.code == .locked)
        #expect(refused?.message.contains("only one process may write a store at a time") == true)
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

import Foundation
import Synchronization
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// "Readers never wait", made deterministic (issue 22): a durable 100,000-object commit is held on the simulated disk
/// between its write and its sync, so it is in flight for as long as the test says; meanwhile a reader on another
/// thread fetches through an index, counts and reads values, and every read completes, within a limit that fails the
/// test, seeing the version before the commit. Released, the commit returns and the next snapshot holds it.
@Suite struct ReadersDuringAHeldSyncTests {
    @Test func readersCompleteWhileADurableCommitIsHeldBetweenItsWriteAndItsSync() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open(JournalWorkload.schema, disk.options(.perCommit))
        try store.write { tx in
            for i in 0..<1_000 {
                try tx.insert("Item", ["title": .string("seed \(i)"), "score": .double(Double(i)), "count": 1])
            }
        }
        // The next sync of a segment waits at the gate: the big commit's, after its bytes are written.
        let gate = disk.block(.sync, pathContains: "segment-")
        let committed = DispatchSemaphore(value: 0)
        let commitError = Mutex<String?>(nil)
        Thread.detachNewThread {
            do {
                var tx = store.transaction()
                for i in 0..<100_000 {
                    try tx.insert("Item", ["title": .string("bulk \(i)"), "score": .double(Double(-i)), "count": 1])
                }
                try store.commit(tx)
            } catch {
                commitError.locked { $0 = "\(error)" }
            }
            committed.signal()
        }
        #expect(gate.waitUntilReached(seconds: 120), "the big commit never reached its sync")

        // The reader: 200 rounds of an index range, a count and a value, all on the version before the commit.
        let rounds = Mutex<[Int]>([])
        let readerDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { readerDone.signal() }
            for _ in 0..<200 {
                let snapshot = store.snapshot
                let top = try? snapshot.fetch(
                    DynamicQuery("Item", where: .greater("score", .double(989.5)), sortBy: [.init("score")]))
                let count = (try? snapshot.count("Item")) ?? -1
                let first = top?.first.flatMap { try? snapshot.value($0, "title") }
                rounds.locked { $0.append(count == 1_000 && top?.count == 10 && first == "seed 990" ? 1 : 0) }
            }
        }
        let finished = readerDone.wait(timeout: .now() + 30) == .success
        #expect(finished, "the reader waited for the held commit")
        // Still held: the reads above ran while the commit was in flight, not after it.
        #expect(committed.wait(timeout: .now()) == .timedOut, "the commit returned before its sync was released")
        let seen = rounds.locked { $0 }
        #expect(seen.count == 200 && seen.allSatisfy { $0 == 1 }, "rounds that saw the version before: \(seen.count)")

        gate.release()
        #expect(committed.wait(timeout: .now() + 120) == .success)
        #expect(commitError.locked { $0 } == nil)
        #expect(try store.snapshot.count("Item") == 101_000)
        try store.close()
    }
}

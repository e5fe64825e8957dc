import Dispatch
import Foundation
import Synchronization
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

@Suite struct JournalReadOnlyDuringCompactionTests {
    /// A read-only open takes no lock, so a writer may compact while it reads and delete the segment it was about to
    /// read; the reader starts again from the new manifest instead of failing, and always sees a whole version.
    @Test func readOnlyOpensSucceedWhileTheWriterKeepsCompacting() throws {
        let temporary = TemporaryDirectory()
        let schema = JournalWorkload.schema
        let options = StoreOptions(compaction: .manual, segmentBytes: 4096)
        let writer = try Store(directory: temporary.store, schema: schema, options: options)
        let done = Atomic<Bool>(false)
        let commits = Atomic<Int>(0)
        let thread = Thread {
            var n = 0
            while !done.load(ordering: .acquiring) {
                do {
                    try writer.write { tx in try tx.insert("Tag", ["label": .string("t\(n)")]) }
                    n += 1
                    commits.store(n, ordering: .releasing)
                    if n % 5 == 0 { try writer.compact() }
                    // Compacting every few milliseconds, still far more often than the automatic policy would.
                    Thread.sleep(forTimeInterval: 0.002)
                } catch {
                    break
                }
            }
        }
        thread.start()
        var opens = 0
        var failures: [String] = []
        // Until enough opens met enough compactions (a count, not a time: ThreadSanitizer or a busy machine makes
        // each open slower), with a limit that fails the test.
        let deadline = Date().addingTimeInterval(120)
        while (opens < 20 || commits.load(ordering: .acquiring) < 50) && Date() < deadline {
            let floor = commits.load(ordering: .acquiring)
            do {
                let reader = try Store(
                    directory: temporary.store, schema: schema, options: StoreOptions(readOnly: true))
                let seen = try reader.snapshot.count("Tag")
                if seen < floor { failures.append("saw \(seen) tags after \(floor) acknowledged commits") }
                try reader.close()
                opens += 1
            } catch {
                failures.append("\(error)")
            }
        }
        done.store(true, ordering: .releasing)
        #expect(eventually { thread.isFinished }, "the writer thread did not stop")
        try writer.close()
        #expect(failures == [])
        #expect(opens >= 20)
        #expect(commits.load(ordering: .acquiring) >= 50, "fewer than 10 compactions during the opens")
    }
}

import Dispatch
import Foundation
import Testing

@testable import Trellis
@testable import trellis_crashtest

/// Bugs the crash suite found in the journal, each kept as the case that found it.
@Suite struct JournalRegressionTests {
    typealias X = CrashExpectations

    /// Runs `body` on a thread of its own; false when it has not returned after `seconds` (a hang).
    static func returns(within seconds: Double, _ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        return done.wait(timeout: .now() + seconds) == .success
    }

    /// Found by the fuzzer: a salvage open waited for its rewrite's ticket, and close waited for the same ticket
    /// again, which a semaphore had already handed out: close hung for ever.
    @Test func closingAStoreThatSalvageRewroteReturns() throws {
        let disk = try X.store(commits: 30)
        let records = try X.records(disk)
        let path = X.path(records[10].file)
        disk.setContents(path, ByteMutators.flipBit(disk.contents(path)!, (records[10].offset + 40) * 8))
        let store = try X.open(disk, recovery: .salvage)
        #expect(store.recoveryReport?.skipped.first?.offset == records[10].offset)
        #expect(Self.returns(within: 20) { try? store.close() }, "close hung after a salvage rewrite")
    }
}

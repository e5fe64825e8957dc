import Dispatch
import Foundation
import Synchronization
import Testing

@testable import Trellis

@Suite struct PipelineTests {
    @Test func itemsArriveInOrderAndTheProducerStopsAfterTheLast() {
        let made = Atomic<Int>(0)
        let pipeline = Pipeline { () -> (item: Int, last: Bool) in
            let k = made.add(1, ordering: .relaxed).newValue
            return (k, k == 500)
        }
        var taken: [Int] = []
        while taken.last != 500 { taken.append(pipeline.next()) }
        pipeline.close()
        #expect(taken == Array(1...500))
        #expect(made.load(ordering: .relaxed) == 500)
    }

    @Test func closingEarlyStopsTheProducerWithinTwoItemsOfTheConsumer() {
        let made = Atomic<Int>(0)
        let pipeline = Pipeline { () -> (item: Int, last: Bool) in
            (made.add(1, ordering: .relaxed).newValue, false)
        }
        for expected in 1...10 { #expect(pipeline.next() == expected) }
        pipeline.close()
        let stopped = made.load(ordering: .relaxed)
        // One item waiting and one being made, at most, beyond the ten taken; nothing more once close returned.
        #expect(stopped >= 10 && stopped <= 12)
        Thread.sleep(forTimeInterval: 0.02)
        #expect(made.load(ordering: .relaxed) == stopped)
        pipeline.close()  // a second close returns at once
    }

    @Test func aConsumerThatOutrunsTheProducerSleepsAndIsWokenForEachItem() {
        // Each item takes longer than the consumer spins, so the consumer goes to sleep for every one.
        let pipeline = Pipeline { () -> (item: Int, last: Bool) in
            Thread.sleep(forTimeInterval: 0.005)
            return (1, false)
        }
        var total = 0
        for _ in 0..<5 { total += pipeline.next() }
        pipeline.close()
        #expect(total == 5)
    }

    @Test func anEventCountsPostsMadeBeforeAndWhileItsWaiterSleeps() {
        let event = HandoffEvent(posted: 2)
        event.wait()
        event.wait()
        let woke = Atomic<Int>(0)
        let done = DispatchSemaphore(value: 0)
        Thread {
            for _ in 0..<3 {
                event.wait()
                woke.add(1, ordering: .relaxed)
            }
            done.signal()
        }.start()
        for _ in 0..<3 {
            Thread.sleep(forTimeInterval: 0.01)
            event.post()
        }
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(woke.load(ordering: .relaxed) == 3)
    }

    /// A checkpoint of many chunks loads on two threads (one decodes, one fills leaves); what it loads must equal what
    /// was written. Run under ThreadSanitizer by `.ci/run`.
    @Test func checkpointLoadsAcrossThreadsEqualTheStoreWritten() throws {
        let directory = TemporaryDirectory()
        let schema = try Fixtures.outlineSchema()
        let written: Graph
        do {
            let store = try Store(directory: directory.store, schema: schema)
            try Fixtures.folderTree(in: store, fanOut: 5, depth: 7)  // 19,531 folders: five chunks
            try store.write { tx in
                for i in 0..<9_000 {
                    try tx.insert("Note", ["title": .string("note \(i)"), "score": .double(Double(i % 97))])
                }
            }
            try store.compact()
            written = store.snapshot
            try store.close()
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.store.path)
        #expect(names.contains { $0.hasPrefix("checkpoint-") })
        let reopened = try Store(directory: directory.store, schema: schema)
        defer { try? reopened.close() }
        #expect(reopened.snapshot.differences(from: written) == [])
        #expect(try reopened.snapshot.count("Folder") == 19_531 && reopened.snapshot.count("Note") == 9_000)
        #expect(reopened.snapshot.invariantViolations() == [])
    }
}

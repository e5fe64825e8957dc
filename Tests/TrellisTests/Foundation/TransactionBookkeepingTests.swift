import Dispatch
import Foundation
import Synchronization
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// The two pieces of bookkeeping every insert goes through: the store's serial counters and a transaction's map from
/// object to position.
@Suite struct TransactionBookkeepingTests {
    /// Runs of consecutive serials at consecutive positions, gaps, repeats of earlier objects and several entities:
    /// every object is found at its newest position, and nothing else is found.
    @Test(arguments: [UInt64(5), 6, 7])
    func positionsFindTheNewestInsertOfEveryObjectAndNothingElse(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var positions = ObjectPositions()
        var model: [ObjectID: Int] = [:]
        var next: [UInt64] = [1, 1, 1]
        var added: [ObjectID] = []
        for position in 0..<3_000 {
            let entity = UInt32(random.next() % 10 == 0 ? random.next() % 3 : 0)
            let id: ObjectID
            switch random.next() % 20 {
            case 0 where !added.isEmpty: id = added[Int(random.next() % UInt64(added.count))]  // again, later
            case 1: id = ObjectID(entity: entity, serial: next[Int(entity)] + random.next() % 50)  // after a gap
            default: id = ObjectID(entity: entity, serial: next[Int(entity)])
            }
            next[Int(id.entity)] = max(next[Int(id.entity)], id.serial + 1)
            // Some positions are skipped, as an update list skips what it merges.
            let at = random.next() % 7 == 0 ? position + 1 : position
            positions.add(id, at: at)
            model[id] = at
            added.append(id)
        }
        for (id, at) in model { #expect(positions.position(of: id) == at, "\(id)") }
        for entity in UInt32(0)..<4 {
            for serial in UInt64(0)...(next[min(Int(entity), 2)] + 3) {
                let id = ObjectID(entity: entity, serial: serial)
                if model[id] == nil { #expect(positions.position(of: id) == nil, "\(id)") }
            }
        }
    }

    /// Threads taking serials at once get each serial once, with no gap; a block of them is one range; raising the
    /// counters to a graph's highest serials lifts only the counters below them.
    @Test func serialsAreUniqueAcrossThreadsAndRaisedOnlyUpwards() {
        let allocator = SerialAllocator(after: [0, 41])
        let taken = Mutex<[[UInt64]]>([[], []])
        DispatchQueue.concurrentPerform(iterations: 4) { k in
            var mine: [[UInt64]] = [[], []]
            for n in 0..<5_000 {
                let entity = UInt32((k + n) % 2)
                mine[Int(entity)].append(allocator.allocate(entity))
            }
            taken.locked {
                $0[0] += mine[0]
                $0[1] += mine[1]
            }
        }
        let serials = taken.locked { $0 }
        #expect(serials[0].sorted() == Array(1...10_000))
        #expect(serials[1].sorted() == Array(42...10_041))
        let block = allocator.allocate(0, count: 100)
        #expect(block == 10_001)
        #expect(allocator.allocate(0) == 10_101)
        allocator.raise(to: [500, 20_000])
        #expect(allocator.allocate(0) == 10_102)
        #expect(allocator.allocate(1) == 20_001)
    }
}

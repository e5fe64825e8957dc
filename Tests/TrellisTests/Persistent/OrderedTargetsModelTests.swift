import Testing

@testable import TrellisCore
@testable import TrellisGraph

/// `OrderedTargets`, the list an ordered to-many relationship will keep per object, against an array.
@Suite struct OrderedTargetsModelTests {
    @Test(arguments: [1, 2, 3])
    func tenThousandRandomInsertsMovesAndRemovesAgreeWithAnArray(seed: UInt64) throws {
        var random = SeededRandom(seed: 0x0D_E4ED + seed)
        var list = OrderedTargets()
        var model: [UInt64] = []
        var kept: [(list: OrderedTargets, model: [UInt64])] = []
        var nextSerial: UInt64 = 1
        for step in 1...10_000 {
            let roll = random.below(100)
            if model.isEmpty || roll < 45 {
                // Half the inserts go to the front or the end, where gaps are halved fastest.
                let index = random.below(2) == 0 ? [0, model.count][random.below(2)] : random.below(model.count + 1)
                list.insert(nextSerial, at: index)
                model.insert(nextSerial, at: index)
                nextSerial += 1
            } else if roll < 75 {
                let (from, to) = (random.below(model.count), random.below(model.count))
                list.move(from: from, to: to)
                model.insert(model.remove(at: from), at: to)
            } else if roll < 90 {
                let index = random.below(model.count)
                try #require(list.remove(at: index) == model.remove(at: index))
            } else {
                let serial = model[random.below(model.count)]
                try #require(list.remove(serial) == model.firstIndex(of: serial))
                model.removeAll { $0 == serial }
                #expect(list.remove(serial) == nil)
            }
            try #require(list.count == model.count)
            if let probe = model.indices.randomElement(using: &random) {
                try #require(list.serial(at: probe) == model[probe])
                try #require(list.index(of: model[probe]) == probe)
            }
            if step % 500 == 0 {
                list.checkInvariants()
                try #require(list.serials == model, "step \(step)")
                kept.append((list, model))
            }
        }
        // Every kept version still reads as it was: edits copy what they change.
        for (old, expected) in kept { #expect(old.serials == expected) }
        #expect(list.index(of: nextSerial) == nil && !list.contains(nextSerial))
    }

    @Test func insertsIntoOneGapRespaceAndKeepTheOrder() {
        // 200 inserts between the same two neighbours exhaust a gap of 2^32 after 32 halvings, several times.
        var list = OrderedTargets([10, 20])
        var model: [UInt64] = [10, 20]
        for serial in UInt64(100)..<300 {
            list.insert(serial, at: 1)
            model.insert(serial, at: 1)
        }
        list.checkInvariants()
        #expect(list.serials == model)
        #expect(list.index(of: 20) == 201 && list.index(of: 10) == 0)
        #expect(list == OrderedTargets(model))
    }
}

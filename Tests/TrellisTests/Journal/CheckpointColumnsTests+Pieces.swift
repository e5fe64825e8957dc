import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// The columns codec's pieces: integer blocks, alphabet-packed text, the sorts and bulk-built trees of the loader.
extension CheckpointColumnsTests {
    @Test func intsBlocksRoundTripAtEveryWidth() throws {
        var rng = SeededRandom(seed: 5)
        var cases: [[Int64]] = [
            [], [0], [.min], [.max, .min], [.min, .max, 0], Array(1...1000), Array(repeating: 7, count: 9),
        ]
        for width in 0...64 {
            cases.append(
                (0..<37).map { _ in
                    width == 64 ? Int64(bitPattern: rng.next()) : Int64(rng.next() >> UInt64(64 - width)) - 3
                })
        }
        cases.append((0..<500).map { Int64($0) * 1_000_000 + Int64(rng.next() % 3) })
        for values in cases {
            let bytes = ByteWriter.bytes { w in
                w.ints(values)
                w.u8(0xEE)
            }
            var r = ByteReader(bytes, context: "t")
            #expect(try r.ints(count: values.count) == values)
            #expect(try r.u8() == 0xEE)
        }
        let run = ByteWriter.bytes { $0.ints(Array(1...10_000)) }
        #expect(run.count < 16, "a run of consecutive numbers packs to its first value and a zero width")
    }

    @Test func textPacksToItsAlphabetAndBack() throws {
        var rng = SeededRandom(seed: 13)
        for size in [1, 2, 3, 27, 33, 64] {
            for count in [1, 7, 8, 9, 64, 1_001] {
                let alphabet = (0..<size).map { UInt8(truncatingIfNeeded: 200 - $0 * 3) }
                let text = (0..<count).map { _ in alphabet[Int(rng.next() % UInt64(size))] }
                let packed = try #require(CheckpointColumns.packAlphabet(text))
                var r = ByteReader(packed, context: "t")
                #expect(try r.unpackAlphabet(count: count) == text)
                #expect(r.isAtEnd)
            }
        }
        #expect(CheckpointColumns.packAlphabet(Array(0...64)) == nil, "more than 64 distinct bytes")
        // A one-letter alphabet takes no bits: packed text beyond 16 MiB is refused before anything is allocated.
        var one = ByteReader([0, 97], context: "t")
        #expect(try one.unpackAlphabet(count: 5) == Array("aaaaa".utf8))
        func chunk(length: Int) -> [UInt8] {
            let lengths = ByteWriter.bytes { lengths in
                lengths.u8(0)
                lengths.ints([Int64(length)])
                lengths.u8(1)
            }
            return ByteWriter.bytes { w in
                w.varint(1)  // Tag
                w.varint(1)
                w.section([0, 2, 0], level: 1, strategies: [])  // serial 1
                w.section(lengths, level: 1, strategies: [])
                w.section([0, 97], level: 1, strategies: [])  // alphabet "a", no code bits
                w.section([0, 0, 0, 0, 0, 0], level: 1, strategies: [])  // no targets
            }
        }
        let small = try CheckpointColumns.decode(chunk(length: 3), schema: Self.schema, context: "t")
        #expect(small.columns[0].text == Array("aaa".utf8))
        #expect(throws: TrellisError.self) {
            try CheckpointColumns.decode(chunk(length: 20_000_000), schema: Self.schema, context: "t")
        }
        // A code past the alphabet is damage.
        var r = ByteReader([2, 10, 20, 30, 0b1111_1111], context: "t")
        #expect(throws: TrellisError.self) { try r.unpackAlphabet(count: 4) }
        // Wherever it is: in the groups of eight codes unpacked by pairs, those near the end read byte by byte, and
        // the last codes, for every width.
        for size in [3, 5, 27, 33, 63] {
            let width = 64 - (size - 1).leadingZeroBitCount
            let count = 203
            let text = (0..<count).map { UInt8(truncatingIfNeeded: 100 + $0 % size) }
            let packed = try #require(CheckpointColumns.packAlphabet(text))
            var good = ByteReader(packed, context: "t")
            #expect(try good.unpackAlphabet(count: count) == text)
            for position in [0, 7, 8, 100, 150, count - 12, count - 9, count - 3, count - 1] {
                var damaged = packed
                // Code `position` starts at bit position × width of the codes, after the size and alphabet bytes.
                for j in 0..<width {
                    let bit = position * width + j
                    damaged[1 + size + bit >> 3] |= 1 << UInt8(bit & 7)
                }
                var bad = ByteReader(damaged, context: "t")
                #expect(throws: TrellisError.self, "size \(size), code \(position)") {
                    try bad.unpackAlphabet(count: count)
                }
            }
        }
        // An alphabet larger than any writer packs (65…256 bytes) is damage, not an index past the code table.
        for size in [65, 200, 256] {
            var big = ByteReader(
                [UInt8(size - 1)] + (0..<size).map { UInt8($0) } + [UInt8](repeating: 0xff, count: 8), context: "t")
            #expect(throws: TrellisError.self) { try big.unpackAlphabet(count: 8) }
        }
    }

    @Test func inPlaceSortSortsLikeTheStandardLibrary() {
        var rng = SeededRandom(seed: 6)
        for n in [0, 1, 2, 3, 16, 17, 100, 1_000, 20_000] {
            for spread in [3, 1 << 20] {
                var a = ContiguousArray((0..<n).map { _ in Int(rng.next() % UInt64(spread)) })
                let expected = a.sorted()
                a.sortWithoutBuffer()
                #expect(Array(a) == expected)
                a.sortWithoutBuffer()
                #expect(Array(a) == expected, "sorted input")
                a.reverse()
                a.sortWithoutBuffer()
                #expect(Array(a) == expected, "reversed input")
            }
        }
    }

    @Test func radixSortSortsScalarEntries() {
        var rng = SeededRandom(seed: 14)
        for n in [0, 1, 65, 100, 5_000] {
            for spread in [UInt64(0), 1, 3, 5_000, .max] {
                let base = rng.next() % 1_000
                let a = ContiguousArray(
                    (0..<n).map { _ in
                        ScalarEntry(
                            bits: spread == .max ? rng.next() : base + rng.next() % (spread + 1), serial: rng.next())
                    })
                let expected = a.sorted()
                #expect(Array(ContiguousArray.radixSorted(count: a.count) { a.forEach($0) }) == expected)
            }
        }
        // Encoded doubles bunch in the upper octaves: buckets split again.
        for n in [100, 5_000, 40_000] {
            let a = ContiguousArray(
                (0..<n).map { _ in
                    ScalarEntry(
                        bits: ScalarCoding.encode(Double(rng.next() >> 11) * 0x1p-53 * 1000 + 1), serial: rng.next())
                })
            let expected = a.sorted()
            #expect(Array(ContiguousArray.radixSorted(count: a.count) { a.forEach($0) }) == expected)
        }
    }

    @Test func bulkBuiltTreesMeetTheirInvariants() {
        for fanout in [4, 5, 64] {
            for n in [0, 1, 2, 3, 4, 5, 7, 31, 32, 33, 63, 64, 65, 96, 97, 200, 4_097, 10_000] {
                let keys = ContiguousArray((0..<n).map { $0 * 3 })
                let tree = SortedTree(ascendingKeys: keys, values: ContiguousArray(keys.map { -$0 }), fanout: fanout)
                tree.checkInvariants()
                #expect(tree.count == n)
                var seen: [Int] = []
                tree.forEach { key, value in
                    #expect(value == -key)
                    seen.append(key)
                }
                #expect(seen == Array(keys))
                var grown = tree
                for k in stride(from: 1, to: 3 * n, by: 7) { grown[k] = 0 }
                grown.checkInvariants()
            }
        }
        for keys in [[UInt64](), [0], [63, 64], Array(0..<5_000), [1, 1 << 20, 1 << 40, .max]] {
            let trie = SerialTrie(ascendingKeys: keys, values: keys.map { ~$0 })
            trie.checkInvariants()
            #expect(trie.count == keys.count)
            for k in keys { #expect(trie[k] == ~k) }
            let set = SerialTrie<Void>(ascendingKeys: keys, values: EmptyCollection())
            set.checkInvariants()
            #expect(set.count == keys.count)
        }
    }
}

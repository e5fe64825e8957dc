import CZlib
import Foundation
import Synchronization
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Large records are deflated in pieces on several threads and joined into one zlib stream; inflate must read it
/// back byte for byte, with its Adler-32 check, whatever the number of pieces.
@Suite struct ZlibPiecesTests {
    /// Text-like bytes (letters and spaces, as in titles) mixed with random 8-byte numbers, as a record holds them.
    static func recordLikeBytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var random = SeededRandom(seed: seed)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 8)
        while bytes.count < count {
            if random.next() % 2 == 0 {
                for _ in 0..<30 {
                    let c = random.next() % 27
                    bytes.append(c == 26 ? 32 : 97 + UInt8(c))
                }
            } else {
                let n = random.next()
                for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: n >> shift)) }
            }
        }
        return Array(bytes.prefix(count))
    }

    @Test(arguments: [1, 2, 3, 4, 7])
    func piecesJoinIntoOneStreamThatInflatesToTheInput(pieces: Int) throws {
        let input = Self.recordLikeBytes(3_000_017, seed: UInt64(pieces))
        let joined = try #require(Zlib.compressInPieces(input, pieces: pieces, level: 1, strategy: .huffmanOnly))
        #expect(Zlib.decompress(joined[...], count: input.count) == input)
        // Huffman coding keeps nothing across bytes: pieces cost only their block headers and flush markers.
        let whole = try #require(Zlib.compressInPieces(input, pieces: 1, level: 1, strategy: .huffmanOnly))
        #expect(joined.count <= whole.count + pieces * 300)
        #expect(joined.count < input.count * 9 / 10)
    }

    @Test func aDamagedJoinedStreamDoesNotInflate() throws {
        let input = Self.recordLikeBytes(2_000_000, seed: 9)
        var joined = try #require(Zlib.compress(input, level: 1, strategy: .huffmanOnly))
        #expect(Zlib.decompress(joined[...], count: input.count) == input)
        // The last byte belongs to the Adler-32 of the whole input.
        joined[joined.count - 1] ^= 0x40
        #expect(Zlib.decompress(joined[...], count: input.count) == nil)
    }

    /// One piece is exactly what zlib's own `compress2` writes, header and Adler-32 included, at every level class.
    @Test(arguments: [Int32(1), 4, 6, 9])
    func onePieceIsWhatZlibItselfWrites(level: Int32) throws {
        let input = Self.recordLikeBytes(200_000, seed: UInt64(level))
        var bound = compressBound(uLong(input.count))
        var reference = [UInt8](repeating: 0, count: Int(bound))
        let status = reference.withUnsafeMutableBufferPointer { o in
            input.withUnsafeBufferPointer { compress2(o.baseAddress, &bound, $0.baseAddress, uLong($0.count), level) }
        }
        #expect(status == Z_OK)
        reference.removeLast(reference.count - Int(bound))
        #expect(Zlib.compress(input, level: level) == reference)
        #expect(Array(reference.prefix(2)) == Zlib.header(level: level))
    }

    @Test func aLimitRefusesOutputThatIsNotShorter() throws {
        let input = Self.recordLikeBytes(100_000, seed: 3)
        let packed = try #require(Zlib.compress(input, level: 1, strategy: .huffmanOnly))
        #expect(Zlib.compress(input, level: 1, strategy: .huffmanOnly, limit: packed.count) == nil)
        #expect(Zlib.compress(input, level: 1, strategy: .huffmanOnly, limit: packed.count + 1) == packed)
    }

    /// The byte-count bound lets a record that cannot halve skip deflate, so it must never exceed what deflate
    /// writes (or a payload that would have halved would be stored raw), and it must be close enough to turn the
    /// others away. Inputs: uniform and skewed alphabets, record-like bytes, blocks whose statistics change at
    /// zlib's block boundaries and between them, one byte, and sizes around a block.
    @Test func theHuffmanBoundNeverExceedsDeflateAndStaysClose() throws {
        var random = SeededRandom(seed: 21)
        func skewed(_ count: Int) -> [UInt8] {
            (0..<count).map { _ in UInt8(truncatingIfNeeded: (random.next() % 256) * (random.next() % 256) >> 8) }
        }
        let block = Zlib.huffmanBlockLiterals
        var inputs: [[UInt8]] = [
            [7], [UInt8](repeating: 0, count: 100_000),
            (0..<100_000).map { _ in UInt8(truncatingIfNeeded: random.next()) },
            (0..<(block - 1)).map { _ in UInt8(random.next() % 4) },
            (0..<(block + 1)).map { _ in UInt8(random.next() % 64) },
            skewed(90_000), Self.recordLikeBytes(87_344, seed: 5), Self.recordLikeBytes(300_001, seed: 6),
        ]
        // Two alphabets alternating every block, then every half block: the per-block codes differ from one code for
        // the whole, and the bound has to follow zlib's own blocks.
        for period in [block, block / 2, 1000] {
            inputs.append(
                (0..<120_000).map { i in
                    (i / period) % 2 == 0 ? UInt8(random.next() % 4) : 200 + UInt8(random.next() % 50)
                })
        }
        for input in inputs {
            let bound = input.withUnsafeBufferPointer(Zlib.huffmanBytesAtLeast)
            let packed = try #require(
                Zlib.compressInPieces(input, pieces: 1, level: 1, strategy: .huffmanOnly, limit: Int.max))
            #expect(bound <= packed.count, "bound \(bound) over deflate's \(packed.count) for \(input.count) bytes")
            // It leaves out each block's code table and the gap between whole-bit codes and the entropy (largest
            // for few symbols: four equally likely bytes and the end-of-block code take 2.25 bits a byte, not 2).
            if input.count >= 1000 {
                #expect(Double(bound) >= Double(packed.count) * 0.85, "bound \(bound), deflate \(packed.count)")
            }
        }
    }

    /// A stream inflates only into exactly its length; damage (the Adler-32 trailer included) or a cut is refused;
    /// a slice that starts mid-array inflates; threads inflating at once each get their own bytes back.
    @Test func inflatingRefusesAWrongLengthOrDamageAndWorksOnManyThreads() throws {
        let inputs = (0..<6).map { Self.recordLikeBytes(3_000 + 1_000 * $0, seed: UInt64(40 + $0)) }
        let packed = try inputs.map { try #require(Zlib.compress($0, level: 6)) }
        for (input, stream) in zip(inputs, packed) {
            #expect(Zlib.decompress(stream[...], count: input.count) == input)
            #expect(Zlib.decompress(stream[...], count: input.count - 1) == nil)
            #expect(Zlib.decompress(stream[...], count: input.count + 1) == nil)
            var damaged = stream
            damaged[damaged.count - 2] ^= 0x10  // the Adler-32 trailer
            #expect(Zlib.decompress(damaged[...], count: input.count) == nil)
            #expect(Zlib.decompress(stream.dropLast(5), count: input.count) == nil)
            // The same stream again, from a slice that starts mid-array.
            let shifted = [0xAA] + stream
            #expect(Zlib.decompress(shifted[1...], count: input.count) == input)
        }
        #expect(Zlib.decompress([][...], count: 10) == nil)
        let mismatches = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { k in
            for round in 0..<50 {
                let n = (k + round) % inputs.count
                if Zlib.decompress(packed[n][...], count: inputs[n].count) != inputs[n] {
                    mismatches.locked { $0 += 1 }
                }
            }
        }
        #expect(mismatches.locked { $0 } == 0)
    }
}

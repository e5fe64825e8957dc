import Foundation
import Testing

@testable import TrellisCore

/// `Value.compare` orders `.data` by unsigned bytes with a prefix first, as `lexicographicallyPrecedes` does, and
/// `isIdentical` agrees with `==` on bytes and strings.
@Suite struct ValueByteOrderTests {
    @Test("data compares as unsigned bytes, a prefix first, exactly as lexicographicallyPrecedes")
    func dataOrderIsUnsignedLexicographic() {
        var random = SeededRandom(seed: 77)
        var blobs: [Data] = [
            Data(), Data([0]), Data([0x7F]), Data([0x80]), Data([0xFF]), Data([0, 0]), Data([0xFF, 0]),
        ]
        for _ in 0..<300 {
            let count = Int(random.next() % 6)
            // Few distinct bytes, so that long common prefixes and equal blobs are frequent.
            blobs.append(Data((0..<count).map { _ in [0x00, 0x01, 0x7F, 0x80, 0xFE][Int(random.next() % 5)] }))
        }
        var checked = 0
        for a in blobs {
            for b in blobs {
                let expected = a.lexicographicallyPrecedes(b) ? -1 : (a == b ? 0 : 1)
                #expect(Value.compare(.data(a), .data(b)) == expected, "\(Array(a)) vs \(Array(b))")
                #expect(Value.data(a).isIdentical(to: .data(b)) == (a == b))
                checked += 1
            }
        }
        #expect(checked == blobs.count * blobs.count)
        #expect(Value.compare(.data(Data([0x80])), .data(Data([0x7F]))) == 1, "a high byte is not negative")
    }

    @Test("strings are identical exactly when equal, and never identical to another case")
    func stringsAreIdenticalWhenEqual() {
        #expect(Value.string("abc").isIdentical(to: .string("abc")))
        #expect(!Value.string("abc").isIdentical(to: .string("abd")))
        #expect(!Value.string("1").isIdentical(to: .int(1)))
        #expect(!Value.data(Data([1])).isIdentical(to: .string("\u{1}")))
    }
}

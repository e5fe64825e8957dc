import Foundation
import TrellisCore

/// An index key for one required number, date or boolean: the value encoded in 64 bits so that unsigned order is the
/// value's order, then the serial. Sixteen bytes, trivially copyable, compared with two integer comparisons — against
/// forty bytes and an enum switch for a general `IndexEntry`.
@usableFromInline package struct ScalarEntry: Comparable, Sendable, BitwiseCopyable {
    @usableFromInline var bits: UInt64
    @usableFromInline package var serial: UInt64

    @inlinable @inline(__always)
    package static func < (lhs: ScalarEntry, rhs: ScalarEntry) -> Bool {
        lhs.bits != rhs.bits ? lhs.bits < rhs.bits : lhs.serial < rhs.serial
    }
}

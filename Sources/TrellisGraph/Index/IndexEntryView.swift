import Foundation
import TrellisCore

/// One entry of an index, read from the index alone: the object it names and the values it is keyed by, without the
/// object's row (an index-only read; see `Snapshot.forEachEntry`).
///
/// Positions count the index's attributes in key order. An index of one or two required numbers, dates or booleans
/// hands back the values it stores, in the form `Value` compares them by: an integer of any width as `.int`, a float
/// as `.double`, a NaN as the one NaN and -0.0 as 0.0. An element index's entry holds the element (or, for a
/// dictionary, the key and the value).
public struct IndexEntryView: Sendable {
    /// The object this entry belongs to.
    public let id: ObjectID
    @usableFromInline let storage: Storage

    @usableFromInline enum Storage: Sendable {
        case scalar(UInt64, ScalarCoding)
        case pair(UInt64, UInt64, ScalarCoding, ScalarCoding)
        case general(IndexEntry)
    }

    @inlinable init(id: ObjectID, storage: Storage) {
        self.id = id
        self.storage = storage
    }

    /// How many values the entry holds.
    public var count: Int {
        switch storage {
        case .scalar: return 1
        case .pair: return 2
        case .general(let entry): return 1 + entry.rest.count
        }
    }

    /// The value at `position`, or `.null` outside `0 ..< count`.
    public func value(_ position: Int) -> Value {
        guard position >= 0 else { return .null }
        switch storage {
        case .scalar(let bits, let coding): return position == 0 ? coding.decode(bits) : .null
        case .pair(let first, let second, let a, let b):
            return position == 0 ? a.decode(first) : position == 1 ? b.decode(second) : .null
        case .general(let entry):
            return position == 0 ? entry.first : position - 1 < entry.rest.count ? entry.rest[position - 1] : .null
        }
    }

    /// The encoded value at `position` of a scalar or pair index, with its coding; nil for a general index.
    @inlinable @inline(__always) func encoded(_ position: Int) -> (UInt64, ScalarCoding)? {
        switch storage {
        case .scalar(let bits, let coding): return position == 0 ? (bits, coding) : nil
        case .pair(let first, let second, let a, let b):
            return position == 0 ? (first, a) : position == 1 ? (second, b) : nil
        case .general: return nil
        }
    }

    /// The integer at `position`, or nil when it holds another kind of value (or none).
    @inlinable @inline(__always) public func int(_ position: Int) -> Int64? {
        if let (bits, coding) = encoded(position) { return coding == .int ? ScalarCoding.decodeInt(bits) : nil }
        if case .int(let i) = value(position) { return i }
        return nil
    }

    /// The number at `position` when it is a double or a float, or nil.
    @inlinable @inline(__always) public func double(_ position: Int) -> Double? {
        if let (bits, coding) = encoded(position) {
            return coding == .double ? ScalarCoding.decodeDouble(bits) : nil
        }
        if case .double(let d) = value(position) { return d }
        return nil
    }

    /// The date at `position`, or nil.
    @inlinable public func date(_ position: Int) -> Date? {
        if let (bits, coding) = encoded(position) {
            return coding == .date ? Date(timeIntervalSinceReferenceDate: ScalarCoding.decodeDouble(bits)) : nil
        }
        if case .date(let d) = value(position) { return d }
        return nil
    }

    /// The boolean at `position`, or nil.
    @inlinable public func bool(_ position: Int) -> Bool? {
        if let (bits, coding) = encoded(position) { return coding == .bool ? bits != 0 : nil }
        if case .bool(let b) = value(position) { return b }
        return nil
    }

    /// The string at `position`, or nil.
    public func string(_ position: Int) -> String? {
        if case .string(let s) = value(position) { return s }
        return nil
    }
}

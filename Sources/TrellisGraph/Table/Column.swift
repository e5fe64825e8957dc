import CTrellisHints
import Foundation
import TrellisCore

/// One attribute's values for the 64 rows of a leaf, stored by kind so that numbers cost 8 bytes and booleans one bit.
///
/// Only the array that matches the attribute's kind is allocated; the others stay empty (no allocation).
@usableFromInline package struct Column: Sendable {
    @usableFromInline package enum Kind: UInt8, Sendable {
        /// `list`: a collection attribute's `.list` values, held like `other`'s (format version 8).
        case bool, int, double, date, string, other, list

        package init(_ type: AttributeType) {
            switch type {
            case .bool: self = .bool
            case .int, .int8, .int16, .int32, .int64: self = .int
            case .double, .float: self = .double
            case .date: self = .date
            case .string: self = .string
            case .data, .uuid, .url, .decimal: self = .other
            case .stringArray, .intArray, .stringSet, .stringDictionary, .metadataDictionary: self = .list
            }
        }
    }

    @usableFromInline package let kind: Kind
    /// An int column whose `ints` hold 32-bit offsets from `bits` (see `narrow(rows:)`); set only by
    /// `narrow(rows:)` and cleared by `widen()`. It sits in the padding after `kind`: the column is no larger.
    @usableFromInline package private(set) var isNarrow: Bool
    /// Bit `r` set: row `r` holds null.
    @usableFromInline package var nulls: UInt64
    /// A Boolean column's values, one bit a row; a narrow int column's base (an `Int64`'s bit pattern).
    @usableFromInline package var bits: UInt64
    /// An int column's 64 values; when `isNarrow`, 32 words whose bytes hold the 64 rows' 32-bit offsets from `bits`
    /// (row r's at byte 4r). Read through `int(at:)`, written through `set`, `fill` or `widen()` first.
    @usableFromInline package var ints: [Int64]
    @usableFromInline package var doubles: [Double]
    @usableFromInline package var strings: PackedStrings
    @usableFromInline package var others: [Value]

    // Every field set once, each array made where it is stored: assigning an array over a default empty one made the
    // optimizer copy the whole column (retaining each of its arrays) into the leaf that a new column goes to.
    init(kind: Kind) {
        self.kind = kind
        isNarrow = false
        nulls = 0
        bits = 0
        ints = kind == .int ? .zeros(Leaf.width) : []
        doubles = kind == .double || kind == .date ? .zeros(Leaf.width) : []
        strings = PackedStrings()
        others = kind == .other || kind == .list ? Array(repeating: .null, count: Leaf.width) : []
    }

    @inlinable @inline(__always)
    package func isNull(_ row: Int) -> Bool { nulls & (1 << UInt64(row)) != 0 }

    // Inlined so that reading one value through `columns[c]` reads the fields in place instead of copying the column
    // (and retaining its arrays) for the call.
    @inlinable @inline(__always)
    package func value(_ row: Int) -> Value {
        if isNull(row) { return .null }
        switch kind {
        case .bool: return .bool(bits & (1 << UInt64(row)) != 0)
        case .int: return .int(int(at: row))
        case .double: return .double(doubles[row])
        case .date: return .date(Date(timeIntervalSinceReferenceDate: doubles[row]))
        case .string: return .string(strings.string(row))
        case .other, .list: return others[row]
        }
    }

    /// Stores `value` at `row`; returns false (storing nothing) when the value's case does not fit this column.
    @discardableResult
    mutating func set(_ row: Int, _ value: Value) -> Bool {
        let bit: UInt64 = 1 << UInt64(row)
        switch (kind, value) {
        case (_, .null):
            nulls |= bit
            clear(row)
            return true
        case (.bool, .bool(let b)): bits = b ? bits | bit : bits & ~bit
        case (.int, .int(let i)): setInt(row, i)
        case (.double, .double(let d)): doubles[row] = d
        case (.date, .date(let d)): doubles[row] = d.timeIntervalSinceReferenceDate
        case (.string, .string(let s)): strings.set(row, s)
        case (.other, .data), (.other, .uuid), (.other, .url), (.other, .decimal), (.list, .list): others[row] = value
        default: return false
        }
        nulls &= ~bit
        return true
    }

    /// Whether `set(_:_:)` would store `value`: null, or a case that fits this column.
    @inline(__always)
    func accepts(_ value: Value) -> Bool {
        switch (kind, value) {
        case (_, .null), (.bool, .bool), (.int, .int), (.double, .double), (.date, .date), (.string, .string),
            (.other, .data), (.other, .uuid), (.other, .url), (.other, .decimal), (.list, .list):
            return true
        default: return false
        }
    }

    /// Stores value `c` of each insert in `run` at its row, as `set` would row by row; every value must be one this
    /// column `accepts`. A run of new rows is written a column at a time, so each array is checked for sharing once
    /// per run rather than once per value, and the inserts are read in place (no retain of each row's values).
    mutating func fill(_ c: Int, from inserts: UnsafeBufferPointer<ChangeSet.Insert>, _ run: Range<Int>) {
        @inline(__always) func row(_ p: Int) -> Int { Int(inserts[p].id.serial & Leaf.mask) }
        var nulls = self.nulls
        switch kind {
        case .bool:
            var bits = self.bits
            for p in run {
                let bit: UInt64 = 1 << UInt64(row(p))
                if case .bool(let b) = inserts[p].values[c] {
                    bits = b ? bits | bit : bits & ~bit
                    nulls &= ~bit
                } else {
                    bits &= ~bit
                    nulls |= bit
                }
            }
            self.bits = bits
        case .int:
            widen()
            ints.withUnsafeMutableBufferPointer { out in
                for p in run {
                    let r = row(p)
                    if case .int(let i) = inserts[p].values[c] {
                        out[r] = i
                        nulls &= ~(1 << UInt64(r))
                    } else {
                        nulls |= 1 << UInt64(r)
                    }
                }
            }
        case .double, .date:
            doubles.withUnsafeMutableBufferPointer { out in
                for p in run {
                    let r = row(p)
                    switch inserts[p].values[c] {
                    case .double(let d):
                        out[r] = d
                        nulls &= ~(1 << UInt64(r))
                    case .date(let d):
                        out[r] = d.timeIntervalSinceReferenceDate
                        nulls &= ~(1 << UInt64(r))
                    default: nulls |= 1 << UInt64(r)
                    }
                }
            }
        case .string, .other, .list:
            if kind == .string, strings.appendInOrder(c, from: inserts, run, nulls: &nulls) { break }
            self.nulls = nulls
            for p in run { set(row(p), inserts[p].values[c]) }
            return
        }
        self.nulls = nulls
    }

    /// Drops what row `row` holds, so a deleted object's strings and blobs are released.
    mutating func clear(_ row: Int) {
        switch kind {
        case .string: if !strings.isEmpty(row) { strings.set(row, "") }
        case .other, .list: if !others[row].isNull { others[row] = .null }
        case .bool: bits &= ~(1 << UInt64(row))
        default: break
        }
    }

    /// Starts bringing in the line that holds row `row`'s value in the column at `column`: a hint, which reads the
    /// column's plain fields and its array's storage address but retains nothing (`ArrayStorageHint`).
    @inline(__always)
    static func prefetchValue(_ column: UnsafePointer<Column>, _ row: Int) {
        let raw = UnsafeRawPointer(column)
        switch column.pointee.kind {
        case .int:
            let shift = column.pointee.isNarrow ? 2 : 3
            ArrayStorageHint.prefetch(raw + ArrayStorageHint.ints, byteOffset: (row & 63) << shift)
        case .double, .date:
            ArrayStorageHint.prefetch(raw + ArrayStorageHint.doubles, byteOffset: (row & 63) << 3)
        default: break
        }
    }

    /// An int column's value at `row` (a null row's slot holds a stale value or the base).
    /// - Complexity: O(1).
    @inlinable @inline(__always)
    package func int(at row: Int) -> Int64 {
        guard isNarrow else { return ints[row] }
        // Row r's offset is the r-th 32-bit unit of the 256 bytes; `& 63` keeps the read inside them.
        let offset = ints.withUnsafeBytes { $0.load(fromByteOffset: (row & 63) << 2, as: UInt32.self) }
        return Int64(bitPattern: bits &+ UInt64(offset))
    }

    /// Calls `body` with an int column's 64 values: its own array, or, when narrow, a temporary decoded from it.
    func withInts<R>(_ body: (UnsafeBufferPointer<Int64>) -> R) -> R {
        guard isNarrow else { return ints.withUnsafeBufferPointer(body) }
        return withUnsafeTemporaryAllocation(of: Int64.self, capacity: Leaf.width) { wide in
            for r in 0..<Leaf.width { wide[r] = int(at: r) }
            return body(UnsafeBufferPointer(wide))
        }
    }

    /// Stores `value` at `row` of an int column, keeping it narrow when the value is within 2^32 above the base and
    /// widening it otherwise.
    package mutating func setInt(_ row: Int, _ value: Int64) {
        if isNarrow {
            let offset = UInt64(bitPattern: value) &- bits
            guard offset > UInt64(UInt32.max) else {
                ints.withUnsafeMutableBytes {
                    $0.storeBytes(
                        of: UInt32(truncatingIfNeeded: offset), toByteOffset: (row & 63) << 2, as: UInt32.self)
                }
                return
            }
            widen()
        }
        ints[row] = value
    }

    /// Halves an int column's memory when its values at `rows` that are not null lie within 2^32 of each other:
    /// `ints` becomes 32 words holding 64 32-bit offsets from the smallest value (row r's is the r-th 32-bit unit of
    /// their bytes), which `bits` keeps. Other rows read as the base. Nothing changes for other columns, a narrow one
    /// or a wider span. Leaves an open builds (a checkpoint load, a replay) are narrowed as they are finished, off the
    /// commit path; a write that does not fit widens the column again.
    mutating func narrow(rows: UInt64) {
        guard kind == .int, !isNarrow else { return }
        let live = rows & ~nulls
        var low = Int64.max
        var high = Int64.min
        ints.withUnsafeBufferPointer { values in
            var m = live
            while m != 0 {
                let r = m.trailingZeroBitCount
                m &= m - 1
                low = Swift.min(low, values[r])
                high = Swift.max(high, values[r])
            }
        }
        if live == 0 { (low, high) = (0, 0) }
        guard UInt64(bitPattern: high) &- UInt64(bitPattern: low) <= UInt64(UInt32.max) else { return }
        let base = UInt64(bitPattern: low)
        // Made as `zeros` makes arrays: `init(uninitializedCapacity:)` looked the buffer's class up on every call.
        var words: [Int64] = .zeros(Leaf.width / 2)
        words.withUnsafeMutableBytes { bytes in
            ints.withUnsafeBufferPointer { values in
                for r in 0..<Leaf.width {
                    let offset = live >> UInt64(r) & 1 != 0 ? UInt64(bitPattern: values[r]) &- base : 0
                    bytes.storeBytes(of: UInt32(truncatingIfNeeded: offset), toByteOffset: r << 2, as: UInt32.self)
                }
            }
        }
        ints = words
        bits = base
        isNarrow = true
    }

    /// Makes a narrow int column hold its 64 values again (each row's value as `int(at:)` reads it).
    mutating func widen() {
        guard isNarrow else { return }
        var wide: [Int64] = .zeros(Leaf.width)
        wide.withUnsafeMutableBufferPointer { out in
            for r in 0..<Leaf.width { out[r] = int(at: r) }
        }
        ints = wide
        bits = 0
        isNarrow = false
    }
}

/// Prefetch hints into an array's elements from where the array is stored, without retaining it: an array is one
/// reference to a storage object whose elements follow a header of four words (`holds` checks it once). A prefetch
/// can neither fault nor change a result; `Column.prefetchValue` also reads a column's plain fields through the
/// address, which is why the hints are used only when `holds` is true.
enum ArrayStorageHint {
    /// The byte offsets of the arrays the hints follow, in their structs.
    static let ints = MemoryLayout<Column>.offset(of: \Column.ints)!
    static let doubles = MemoryLayout<Column>.offset(of: \Column.doubles)!
    static let leafColumns = MemoryLayout<Leaf>.offset(of: \Leaf.columns)!
    /// Where the elements start in an array's storage object.
    static let header = 4 * MemoryLayout<Int>.size

    /// Whether arrays lie as these hints expect (checked once on an array made for it); when not, `forEach(reading:)`
    /// gives no hints, since the column hint reads a column's fields where it expects them.
    static let holds: Bool = {
        let array = [Column(kind: .int), Column(kind: .double)]
        let stored = withUnsafePointer(to: array) { UnsafeRawPointer($0).load(as: UnsafeRawPointer?.self) }
        let elements = array.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
        return elements != nil && stored.map { $0 + header } == elements
            && MemoryLayout<[Column]>.size == MemoryLayout<UnsafeRawPointer>.size
    }()

    /// Prefetches `byteOffset` bytes into the elements of the array stored at `array`.
    @inline(__always)
    static func prefetch(_ array: UnsafeRawPointer, byteOffset: Int) {
        guard let storage = array.load(as: UnsafeRawPointer?.self) else { return }
        trellis_prefetch(storage + header + byteOffset)
    }
}

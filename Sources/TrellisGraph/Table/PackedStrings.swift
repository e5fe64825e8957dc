import TrellisCore

/// The strings of a leaf's 64 rows as one UTF-8 buffer and 64 end offsets.
///
/// About one byte a character plus four for the offset, where a `[String]` costs 16 bytes a row plus, for strings of
/// more than 15 UTF-8 bytes, a heap object of 48–80 bytes. Reading a long string builds a `String` (one allocation);
/// writing one splices the leaf's buffer (at most a few KiB).
///
/// ```
/// bytes: |row0 bytes|row1 bytes|...|row63 bytes|
/// ends:   e0         e1             e63          row r spans ends[r-1] ..< ends[r] (0 ..< ends[0] for row 0)
/// ```
@usableFromInline package struct PackedStrings: Sendable {
    @usableFromInline package private(set) var bytes: [UInt8] = []
    /// Empty until the first string is set, so the columns of other kinds (which hold a `PackedStrings` too) cost no
    /// allocation for it.
    @usableFromInline package private(set) var ends: [UInt32] = []

    package init() {}

    /// Strings packed already (a checkpoint load): `Leaf.width` ascending end offsets, the last one `bytes.count`.
    package init(bytes: [UInt8], ends: [UInt32]) {
        self.bytes = bytes
        self.ends = ends
    }

    /// The bytes of row `row`.
    @inlinable @inline(__always)
    package func span(_ row: Int) -> Range<Int> {
        if ends.isEmpty { return 0..<0 }
        return (row == 0 ? 0 : Int(ends[row - 1]))..<Int(ends[row])
    }

    @usableFromInline func string(_ row: Int) -> String {
        let range = span(row)
        if range.isEmpty { return "" }
        // Decoded straight from the buffer: a slice of `bytes` would retain and release it.
        return bytes.withUnsafeBufferPointer {
            String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self)
        }
    }

    /// Where row `row`'s bytes start in the column's buffer, read through a pointer to the column's storage, and
    /// their count. `Row.string` makes the string from them once it is out of the arrays' closures: made inside
    /// them, the compiler kept both arrays retained across the string initializer (an opaque call), four atomic
    /// operations per read. The address stays valid while the leaf holding this column lives and is not written,
    /// which a row's column list guarantees (it is immutable and the row holds it).
    @inlinable @inline(__always)
    static func utf8(at strings: UnsafePointer<PackedStrings>, _ row: Int) -> (UnsafePointer<UInt8>?, Int) {
        let ends = strings.pointer(to: \.ends)!
        let bytes = strings.pointer(to: \.bytes)!
        let range = Self.span(ends, row)
        return bytes.pointee.withUnsafeBufferPointer { source in
            guard !range.isEmpty else { return (nil, 0) }
            precondition(range.upperBound <= source.count, "a string's end beyond its leaf's bytes")
            return (source.baseAddress! + range.lowerBound, range.count)
        }
    }

    @inlinable @inline(__always)
    static func span(_ ends: UnsafePointer<[UInt32]>, _ row: Int) -> Range<Int> {
        ends.pointee.withUnsafeBufferPointer { ends in
            if ends.isEmpty { return 0..<0 }
            return (row == 0 ? 0 : Int(ends[row - 1]))..<Int(ends[row])
        }
    }

    func isEmpty(_ row: Int) -> Bool { span(row).isEmpty }

    /// Stores row `row`'s string from its UTF-8 bytes (valid UTF-8, checked by the caller), as `set(_:_:)` stores a
    /// `String`: what recovery writes a journal's text with, without making a `String` of it first.
    package mutating func set(_ row: Int, utf8 source: UnsafeRawBufferPointer) {
        if ends.isEmpty {
            if source.isEmpty { return }
            ends = .zeros(Leaf.width)
        }
        let range = span(row)
        if range.isEmpty && range.lowerBound == bytes.count {
            bytes.append(contentsOf: source)
        } else {
            bytes.replaceSubrange(range, with: source)
        }
        let delta = source.count - range.count
        if delta != 0 {
            let shift = UInt32(truncatingIfNeeded: delta)
            ends.withUnsafeMutableBufferPointer { ends in
                for r in row..<Leaf.width { ends[r] &+= shift }
            }
        }
        if row == Leaf.width - 1, bytes.capacity > bytes.count + bytes.count / 8 + 16 {
            bytes = Array(uninitializedCapacity: bytes.count) { buffer, count in
                count = buffer.initialize(from: bytes).1
            }
        }
    }

    /// Stores value `c` of each insert in `run` (strings or nulls, at their rows) when every row from the run's first
    /// one on is empty and the rows ascend, as in a leaf filled in serial order: the bytes are reserved once and each
    /// string appended, and the end offsets are written in one pass instead of shifted after every row. Returns false,
    /// changing nothing, when that does not hold; `set(_:_:)` row by row does the rest.
    mutating func appendInOrder(
        _ c: Int, from inserts: UnsafeBufferPointer<ChangeSet.Insert>, _ run: Range<Int>, nulls: inout UInt64
    ) -> Bool {
        @inline(__always) func row(_ p: Int) -> Int { Int(inserts[p].id.serial & Leaf.mask) }
        let first = row(run.lowerBound)
        // Rows `first...` are all empty when the first one starts at the end of the bytes (ends only grow).
        guard span(first).lowerBound == bytes.count else { return false }
        var total = 0
        var previous = -1
        for p in run {
            guard row(p) > previous else { return false }
            previous = row(p)
            if case .string(let string) = inserts[p].values[c] { total += string.utf8.count }
        }
        if total == 0 && ends.isEmpty {
            for p in run where inserts[p].values[c].isNull { nulls |= 1 << UInt64(row(p)) }
            return true
        }
        if ends.isEmpty { ends = .zeros(Leaf.width) }
        bytes.reserveCapacity(bytes.count + total)
        var end = UInt32(truncatingIfNeeded: bytes.count)
        var next = first
        for p in run {
            let r = row(p)
            let bit: UInt64 = 1 << UInt64(r)
            ends.withUnsafeMutableBufferPointer { ends in
                for k in next..<r { ends[k] = end }
            }
            if case .string(var string) = inserts[p].values[c] {
                string.withUTF8 { bytes.append(contentsOf: $0) }
                end = UInt32(truncatingIfNeeded: bytes.count)
                nulls &= ~bit
            } else {
                nulls |= bit
            }
            ends[r] = end
            next = r + 1
        }
        ends.withUnsafeMutableBufferPointer { ends in
            for k in next..<Leaf.width { ends[k] = end }
        }
        return true
    }

    mutating func set(_ row: Int, _ string: String) {
        if ends.isEmpty {
            if string.isEmpty { return }
            ends = .zeros(Leaf.width)
        }
        let range = span(row)
        let length = string.utf8.count
        // Rows usually fill in order, each new string going at the end of the buffer: then it is one copy of the
        // string's bytes, not a generic splice over its UTF-8 view.
        let appended =
            range.isEmpty && range.lowerBound == bytes.count
            && string.utf8.withContiguousStorageIfAvailable { bytes.append(contentsOf: $0) } != nil
        if !appended { bytes.replaceSubrange(range, with: string.utf8) }
        let delta = length - range.count
        if delta != 0 {
            let shift = UInt32(truncatingIfNeeded: delta)  // wraps back for a shorter string: ends stay exact
            ends.withUnsafeMutableBufferPointer { ends in
                for r in row..<Leaf.width { ends[r] &+= shift }
            }
        }
        // Leaves fill in serial order; once the last row is written, drop the growth slack.
        if row == Leaf.width - 1, bytes.capacity > bytes.count + bytes.count / 8 + 16 {
            bytes = Array(uninitializedCapacity: bytes.count) { buffer, count in
                count = buffer.initialize(from: bytes).1
            }
        }
    }
}

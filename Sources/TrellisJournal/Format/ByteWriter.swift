import TrellisCore

/// Writes the journal's primitive encodings: little-endian fixed-width integers, LEB128 varints, zigzag signed
/// varints, length-prefixed byte strings, and (in `ValueTag.swift`) values. Every record, checkpoint and schema
/// encoder writes through it.
///
/// A writer lives inside `ByteWriter.bytes(estimate:_:)`, which runs it over the storage of the array it returns,
/// so the usual case copies nothing; a writer that outgrows the estimate moves to memory of its own. Each item
/// reserves the most bytes it can take once, then stores them without further capacity or bounds checks. It is
/// noncopyable, so the storage cannot outlive the call.
struct ByteWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0
    /// Whether `base` is this writer's to free (false while it writes into the array `bytes(estimate:_:)` made).
    private var owned: Bool
    /// `pieces(estimate:pieceBytes:_:)`: the most bytes one piece holds (0: one buffer, which grows), and the pieces
    /// written out so far, in order.
    private var pieceLimit = 0
    private var sealed: [[UInt8]] = []

    private init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        base = buffer.baseAddress!
        capacity = buffer.count
        owned = false
    }

    /// The bytes `body` writes. `estimate` sizes the array; writing more than it is correct, only costs a copy.
    static func bytes(estimate: Int = 64, _ body: (inout ByteWriter) -> Void) -> [UInt8] {
        var grown: [UInt8]?
        let bytes = [UInt8](uninitializedCapacity: max(estimate, 64)) { buffer, initialized in
            var w = ByteWriter(buffer)
            body(&w)
            if w.owned {
                grown = [UInt8](UnsafeBufferPointer(start: w.base, count: w.count))
                w.base.deallocate()
                initialized = 0
            } else {
                initialized = w.count
            }
        }
        return grown ?? bytes
    }

    /// The bytes `body` writes, as pieces that follow one another, each of at most `pieceBytes` unless one item
    /// alone is larger: an item is never cut, and no buffer ever holds more than a piece, so a record of a gigabyte
    /// is encoded without one buffer of a gigabyte. Offsets (`setU32`, `written`) are not available in this mode.
    static func pieces(estimate: Int = 64, pieceBytes: Int, _ body: (inout ByteWriter) -> Void) -> [[UInt8]] {
        var sealed: [[UInt8]] = []
        var grown: [UInt8]?
        let last = [UInt8](uninitializedCapacity: max(min(estimate, pieceBytes), 64)) { buffer, initialized in
            var w = ByteWriter(buffer)
            w.pieceLimit = pieceBytes
            body(&w)
            sealed = w.sealed
            if w.owned {
                grown = [UInt8](UnsafeBufferPointer(start: w.base, count: w.count))
                w.base.deallocate()
                initialized = 0
            } else {
                initialized = w.count
            }
        }
        let tail = grown ?? last
        if !tail.isEmpty || sealed.isEmpty { sealed.append(tail) }
        return sealed
    }

    /// Makes room for `n` more bytes.
    @inline(__always) mutating func reserve(_ n: Int) {
        if capacity &- count < n { grow(n) }
    }

    @inline(never) private mutating func grow(_ n: Int) {
        if pieceLimit > 0 {
            // Writing in pieces: what is written goes out as a piece when `n` more bytes would pass the limit, and
            // the buffer is written over from its start.
            if count > 0 && count + n > pieceLimit {
                sealed.append([UInt8](UnsafeBufferPointer(start: base, count: count)))
                count = 0
            }
            if capacity &- count >= n { return }
        }
        var newCapacity = max(capacity * 2, count + n)
        if pieceLimit > 0 { newCapacity = max(min(newCapacity, pieceLimit), count + n) }
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: count)
        if owned { base.deallocate() }
        base = newBase
        capacity = newCapacity
        owned = true
    }

    // Unchecked stores: the caller has reserved room.

    @inline(__always) private mutating func put(_ b: UInt8) {
        base[count] = b
        count &+= 1
    }

    @inline(__always) private mutating func putVarint(_ v: UInt64) {
        var v = v
        var p = base + count
        while v >= 0x80 {
            p.pointee = UInt8(truncatingIfNeeded: v) | 0x80
            p += 1
            v >>= 7
        }
        p.pointee = UInt8(truncatingIfNeeded: v)
        count = p - base + 1
    }

    @inline(__always) private mutating func putU64(_ v: UInt64) {
        UnsafeMutableRawPointer(base + count).storeBytes(of: v.littleEndian, as: UInt64.self)
        count &+= 8
    }

    @inline(__always) private mutating func putBytes(_ b: UnsafeRawBufferPointer) {
        if let source = b.baseAddress, b.count > 0 {
            UnsafeMutableRawPointer(base + count).copyMemory(from: source, byteCount: b.count)
            count &+= b.count
        }
    }

    // Checked items.

    @inline(__always) mutating func u8(_ v: UInt8) {
        reserve(1)
        put(v)
    }

    mutating func u16(_ v: UInt16) {
        reserve(2)
        UnsafeMutableRawPointer(base + count).storeBytes(of: v.littleEndian, as: UInt16.self)
        count &+= 2
    }

    mutating func u32(_ v: UInt32) {
        reserve(4)
        UnsafeMutableRawPointer(base + count).storeBytes(of: v.littleEndian, as: UInt32.self)
        count &+= 4
    }

    @inline(__always) mutating func u64(_ v: UInt64) {
        reserve(8)
        putU64(v)
    }

    @inline(__always) mutating func varint(_ v: UInt64) {
        reserve(10)
        putVarint(v)
    }

    @inline(__always) mutating func varint(_ v: Int) { varint(UInt64(v)) }

    /// A zigzag varint: small magnitudes of either sign take few bytes.
    @inline(__always) mutating func signed(_ v: Int64) {
        reserve(10)
        putVarint(Self.zigzag(v))
    }

    /// A tag byte, then a zigzag varint (one capacity check for both).
    @inline(__always) mutating func u8(_ tag: UInt8, signed v: Int64) {
        reserve(11)
        put(tag)
        putVarint(Self.zigzag(v))
    }

    /// A tag byte, then eight bytes little-endian (one capacity check for both).
    @inline(__always) mutating func u8(_ tag: UInt8, u64 v: UInt64) {
        reserve(9)
        put(tag)
        putU64(v)
    }

    @inline(__always) static func zigzag(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v << 1) ^ (v >> 63)) }

    /// Bytes encoded elsewhere, as they are.
    mutating func append(_ b: UnsafeRawBufferPointer) {
        reserve(b.count)
        putBytes(b)
    }

    /// Bytes encoded elsewhere, as they are.
    mutating func append(_ b: some Sequence<UInt8>) {
        let done: Void? = b.withContiguousStorageIfAvailable { append(UnsafeRawBufferPointer($0)) }
        if done == nil { for byte in b { u8(byte) } }
    }

    /// Varint length, then the bytes.
    @inline(__always)
    mutating func blob(_ b: UnsafeRawBufferPointer) {
        reserve(10 + b.count)
        putVarint(UInt64(b.count))
        putBytes(b)
    }

    /// Varint length, then the bytes.
    mutating func blob(_ b: some Collection<UInt8>) {
        let done: Void? = b.withContiguousStorageIfAvailable { blob(UnsafeRawBufferPointer($0)) }
        if done == nil { blob(Array(b)) }
    }

    /// Varint length, then the UTF-8.
    mutating func string(_ s: String) {
        let done: Void? = s.utf8.withContiguousStorageIfAvailable { blob(UnsafeRawBufferPointer($0)) }
        if done == nil {
            var copy = s
            copy.withUTF8 { blob(UnsafeRawBufferPointer($0)) }
        }
    }

    /// Pads with zeros to a multiple of `alignment`.
    mutating func pad(to alignment: Int) {
        let extra = (alignment - count % alignment) % alignment
        reserve(extra)
        for _ in 0..<extra { put(0) }
    }

    /// Overwrites four bytes at `offset` (for checksums and lengths known only at the end).
    mutating func setU32(_ v: UInt32, at offset: Int) {
        precondition(offset >= 0 && offset + 4 <= count && pieceLimit == 0, "setU32 past the bytes written")
        UnsafeMutableRawPointer(base + offset).storeBytes(of: v.littleEndian, as: UInt32.self)
    }

    /// The bytes written so far in `range`, valid until the next write (for checksums over what is written).
    func written(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        precondition(
            range.lowerBound >= 0 && range.upperBound <= count && pieceLimit == 0, "a range past the bytes written")
        return UnsafeBufferPointer(start: base + range.lowerBound, count: range.count)
    }
}

import Foundation
import TrellisCore
import TrellisGraph

/// The fast path of `ByteWriter` for change-set payloads: a buffer of raw memory where each item reserves the most
/// bytes it can take once, then stores its bytes without further capacity or bounds checks.
///
/// It writes exactly the bytes `ByteWriter` writes for the same calls (varints, zigzag, little-endian, tags as in
/// `ValueCodec`). `PayloadWriter.bytes(estimate:_:)` runs a writer over an array's own storage, so that the usual
/// case copies nothing; a writer that outgrows it moves to memory of its own.
struct PayloadWriter {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0
    /// Whether `base` is this writer's to free (false while it writes into the array `bytes(estimate:_:)` made).
    private var owned: Bool

    private init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        base = buffer.baseAddress!
        capacity = buffer.count
        owned = false
    }

    /// The bytes `body` writes. `estimate` sizes the array; more bytes than it are correct, only slower.
    static func bytes(estimate: Int, _ body: (inout PayloadWriter) -> Void) -> [UInt8] {
        var grown: [UInt8]?
        let bytes = [UInt8](unsafeUninitializedCapacity: max(estimate, 64)) { buffer, initialized in
            var w = PayloadWriter(buffer)
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

    /// Makes room for `n` more bytes.
    @inline(__always) mutating func reserve(_ n: Int) {
        if capacity &- count < n { grow(n) }
    }

    @inline(never) private mutating func grow(_ n: Int) {
        let newCapacity = max(capacity * 2, count + n)
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

    private mutating func putBytes(_ b: UnsafeRawBufferPointer) {
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

    @inline(__always) mutating func varint(_ v: UInt64) {
        reserve(10)
        putVarint(v)
    }

    @inline(__always) mutating func varint(_ v: Int) { varint(UInt64(v)) }

    /// Bytes encoded elsewhere, as they are.
    mutating func raw(_ b: [UInt8]) {
        reserve(b.count)
        b.withUnsafeBytes { putBytes($0) }
    }

    /// Varint length, then the bytes.
    mutating func blob(_ b: UnsafeRawBufferPointer) {
        reserve(10 + b.count)
        putVarint(UInt64(b.count))
        putBytes(b)
    }

    mutating func string(_ s: String) {
        let done: Void? = s.utf8.withContiguousStorageIfAvailable { blob(UnsafeRawBufferPointer($0)) }
        if done == nil {
            var copy = s
            copy.withUTF8 { blob(UnsafeRawBufferPointer($0)) }
        }
    }

    /// A `Value` as `ByteWriter.value(_:)` writes it.
    mutating func value(_ value: Value) {
        switch value {
        case .null: u8(ValueTag.null.rawValue)
        case .bool(let b): u8(b ? ValueTag.boolTrue.rawValue : ValueTag.boolFalse.rawValue)
        case .int(let i):
            reserve(11)
            put(ValueTag.int.rawValue)
            putVarint(UInt64(bitPattern: (i << 1) ^ (i >> 63)))
        case .double(let d):
            reserve(9)
            put(ValueTag.double.rawValue)
            putU64(d.bitPattern)
        case .string(let s):
            u8(ValueTag.string.rawValue)
            string(s)
        case .date(let d):
            reserve(9)
            put(ValueTag.date.rawValue)
            putU64(d.timeIntervalSinceReferenceDate.bitPattern)
        case .data(let d):
            u8(ValueTag.data.rawValue)
            d.withUnsafeBytes { blob($0) }
        case .uuid(let u):
            reserve(17)
            put(ValueTag.uuid.rawValue)
            withUnsafeBytes(of: u.uuid) { putBytes($0) }
        case .url(let u):
            u8(ValueTag.url.rawValue)
            string(u.absoluteString)
        case .decimal(let d):
            if d.isNaN {
                u8(ValueTag.decimalNaN.rawValue)
            } else {
                u8(ValueTag.decimal.rawValue)
                string(d.description)
            }
        }
    }
}

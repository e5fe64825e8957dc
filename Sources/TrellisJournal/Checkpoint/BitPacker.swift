/// Packs values of `width` bits each, least significant bit first.
struct BitPacker {
    let width: Int
    var bytes: [UInt8]
    private var buffer: UInt64 = 0
    private var buffered = 0

    init(width: Int, count: Int) {
        self.width = width
        bytes = []
        bytes.reserveCapacity((count * width + 7) / 8)
    }

    mutating func add(_ value: UInt64) {
        var v = value
        var left = width
        while left > 0 {
            let take = min(left, 32)
            let piece = v & ((1 << UInt64(take)) - 1)
            v >>= UInt64(take)
            left -= take
            buffer |= piece << UInt64(buffered)
            buffered += take
            while buffered >= 8 {
                bytes.append(UInt8(truncatingIfNeeded: buffer))
                buffer >>= 8
                buffered -= 8
            }
        }
    }

    mutating func finish() -> [UInt8] {
        if buffered > 0 { bytes.append(UInt8(truncatingIfNeeded: buffer)) }
        buffered = 0
        buffer = 0
        return bytes
    }
}

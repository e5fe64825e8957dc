/// How a record's payload is stored.
enum RecordCodec: UInt8 {
    case none = 0
    case zlib = 1
}

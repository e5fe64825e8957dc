/// An open file of a `FileLayer`. Offsets are absolute; there is no shared file position.
package protocol LayerFile: AnyObject, Sendable {
    var path: String { get }
    func size() throws -> Int
    /// Reads up to `count` bytes at `offset`; fewer only at the end of the file.
    func read(at offset: Int, count: Int) throws -> [UInt8]
    /// Writes every byte of `bytes` at `offset`, or throws.
    func write(_ bytes: [UInt8], at offset: Int) throws
    func truncate(to size: Int) throws
    /// Reserves space so the file is at least `size` bytes long, the new part reading as zeros. Advisory: returns
    /// false when the layer does not reserve space (the file is unchanged), true when it tried (a failure leaves at
    /// most some zeros, which read as reserved space).
    func preallocate(to size: Int) -> Bool
    /// Makes the file's data durable (`fdatasync` on Linux, `F_FULLFSYNC` on Apple platforms). Never retried.
    func sync() throws
    func close()
}

extension LayerFile {
    package func preallocate(to size: Int) -> Bool { false }
}

/// An exclusive `flock` on the store's lock file, released with the file descriptor.
final class PosixLock: LayerLock {
    private let file: PosixFile

    init(file: PosixFile) { self.file = file }

    func release() { file.close() }

    deinit { file.close() }
}

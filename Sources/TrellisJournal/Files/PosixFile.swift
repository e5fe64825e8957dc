import Synchronization
import TrellisCore
import TrellisGraph

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open file descriptor; the only place where the journal hands raw memory to the kernel.
///
/// Reads and writes are positional (`pread`/`pwrite`), loop until every byte is moved, and retry `EINTR`.
final class PosixFile: LayerFile {
    let path: String
    private let descriptor: Mutex<Int32>

    init(fd: Int32, path: String) {
        self.descriptor = Mutex(fd)
        self.path = path
    }

    private var fd: Int32 {
        get throws {
            let fd = descriptor.locked { $0 }
            guard fd >= 0 else { throw TrellisError(.io, "\(path) is already closed") }
            return fd
        }
    }

    func size() throws -> Int {
        var info = stat()
        let fd = try self.fd
        guard fstat(fd, &info) == 0 else { throw posixError("fstat", path, errno) }
        return Int(info.st_size)
    }

    func read(at offset: Int, count: Int) throws -> [UInt8] {
        let fd = try self.fd
        // Not zeroed first: the buffer holds what was read and no more (a checkpoint load reads megabytes here).
        return try [UInt8](uninitializedCapacity: count) { buffer, initialized in
            while initialized < count {
                let n = pread(fd, buffer.baseAddress! + initialized, count - initialized, off_t(offset + initialized))
                if n == 0 { break }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw posixError("pread", path, errno)
                }
                initialized += n
            }
        }
    }

    func write(_ bytes: [UInt8], at offset: Int) throws {
        let fd = try self.fd
        var done = 0
        try bytes.withUnsafeBytes { raw in
            while done < raw.count {
                let n = pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(offset + done))
                if n < 0 {
                    if errno == EINTR { continue }
                    throw posixError("pwrite", path, errno)
                }
                done += n
            }
        }
    }

    func truncate(to size: Int) throws {
        let fd = try self.fd
        try retryingInterrupts("ftruncate", path) { ftruncate(fd, off_t(size)) }
    }

    /// `posix_fallocate` on Linux: appends that stay inside reserved space do not change the file's size, so their
    /// `fdatasync` has no metadata to commit, and is faster.
    func preallocate(to size: Int) -> Bool {
        #if os(Linux)
        // A closed file, or an error (no space, a file system that cannot reserve), reserves nothing and says so: the
        // write that follows reports any real lack of space itself, and the next batch tries to reserve again.
        guard let fd = try? self.fd else { return false }
        return posix_fallocate(fd, 0, off_t(size)) == 0
        #else
        return false
        #endif
    }

    func sync() throws {
        let fd = try self.fd
        #if canImport(Darwin)
        try fullSync(fd, path)
        #elseif os(Linux)
        try retryingInterrupts("fdatasync", path) { fdatasync(fd) }
        #else
        try retryingInterrupts("fsync", path) { fsync(fd) }
        #endif
    }

    func close() {
        let fd = descriptor.locked { fd -> Int32 in
            defer { fd = -1 }
            return fd
        }
        // close is never retried on EINTR: on Linux the descriptor is gone either way.
        if fd >= 0 { posixClose(fd) }
    }

    deinit { close() }
}

// Free functions, so that the layer's own `open`, `rename` and `close` methods do not shadow the system calls.

func posixOpen(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 { open(path, flags, mode) }

func posixRename(_ from: String, _ to: String) -> Int32 { rename(from, to) }

func posixLink(_ existing: String, _ new: String) -> Int32 { link(existing, new) }

func posixClose(_ fd: Int32) { _ = close(fd) }

/// The names in a directory (without "." and ".."), read with `readdir`.
func posixList(_ directory: String) throws -> [String] {
    guard let stream = opendir(directory) else { throw posixError("opendir", directory, errno) }
    defer { closedir(stream) }
    var names: [String] = []
    while let entry = readdir(stream) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

import TrellisCore
import TrellisGraph

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The real file layer: POSIX calls that retry `EINTR`, loop partial reads and writes, and sync with `fdatasync`
/// (Linux) or `F_FULLFSYNC` (Apple platforms, where `fsync` does not reach the disk's platters; `fullSync`).
///
/// The system calls that touch raw memory are in `PosixFile.swift`.
struct PosixFileLayer: FileLayer {
    /// Measured on ext4 only; a copy-on-write file system (APFS, btrfs) allocates anew on every overwrite anyway.
    var writesZerosAhead: Bool {
        #if os(Linux)
        return true
        #else
        return false
        #endif
    }

    func exists(_ path: String) -> (exists: Bool, isDirectory: Bool) {
        var info = stat()
        guard stat(path, &info) == 0 else { return (false, false) }
        return (true, (info.st_mode & S_IFMT) == S_IFDIR)
    }

    func createDirectory(_ path: String) throws {
        if mkdir(path, 0o700) != 0 {
            let error = errno
            if error == ENOENT, parent(of: path) != path {
                // Missing parents are created too (owner-only), as `mkdir -p` would.
                try createDirectory(parent(of: path))
                return try createDirectory(path)
            }
            guard error == EEXIST, exists(path).isDirectory else { throw posixError("mkdir", path, error) }
        }
        // The directory's entry lives in its parent; without this a crash can forget the whole store. An existing
        // directory is synced too: the open that created it may have died, or failed, before its sync.
        try syncDirectory(parent(of: path))
    }

    func list(_ directory: String) throws -> [String] { try posixList(directory) }

    func open(_ path: String, _ mode: FileOpenMode) throws -> any LayerFile {
        let flags: Int32
        switch mode {
        case .read: flags = O_RDONLY
        case .readWrite: flags = O_RDWR
        case .create: flags = O_RDWR | O_CREAT | O_TRUNC
        }
        let fd = try retryingInterrupts("open", path) { posixOpen(path, flags | O_CLOEXEC, 0o600) }
        return PosixFile(fd: fd, path: path)
    }

    func openDurableMark(_ path: String) -> (any LayerFile)? {
        guard let fd = try? retryingInterrupts("open", path, { posixOpen(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600) })
        else { return nil }
        return PosixFile(fd: fd, path: path)
    }

    func rename(_ from: String, to: String) throws {
        _ = try retryingInterrupts("rename", from + " -> " + to) { posixRename(from, to) }
    }

    func link(_ existing: String, to new: String) throws {
        _ = try retryingInterrupts("link", existing + " -> " + new) { posixLink(existing, new) }
    }

    func remove(_ path: String) throws {
        _ = try retryingInterrupts("unlink", path) { unlink(path) }
    }

    func syncDirectory(_ path: String) throws {
        let fd = try retryingInterrupts("open", path) { posixOpen(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { posixClose(fd) }
        #if canImport(Darwin)
        try fullSync(fd, path)
        #else
        _ = try retryingInterrupts("fsync", path) { fsync(fd) }
        #endif
    }

    func lockExclusively(_ path: String) throws -> any LayerLock {
        let fd = try retryingInterrupts("open", path) { posixOpen(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600) }
        // flock locks belong to the open file description, so a second open in this same process is refused too
        // (fcntl locks would not be). The same holds for a child this process forks: until it execs (which closes
        // the descriptor, opened close-on-exec) it holds the lock of a store this process just closed. So a busy lock
        // is tried again for a quarter of a second before it counts as another writer's.
        var acquired = flock(fd, LOCK_EX | LOCK_NB) == 0
        var attempts = 0
        while !acquired && errno == EWOULDBLOCK && attempts < 50 {
            attempts += 1
            usleep(5_000)
            acquired = flock(fd, LOCK_EX | LOCK_NB) == 0
        }
        if !acquired {
            let error = errno
            let holder = PosixFile(fd: fd, path: path)
            let pid = (try? holder.read(at: 0, count: 32)).map { String(decoding: $0, as: UTF8.self) } ?? ""
            holder.close()
            if error == EWOULDBLOCK {
                let who = pid.isEmpty ? "another process" : "process \(pid.trimmingSpaces)"
                throw TrellisError(
                    .locked,
                    "\(path) is locked by another writer (\(who)); only one process may write a store at a time — "
                        + "open it with StoreOptions(readOnly: true) to read it meanwhile")
            }
            throw posixError("flock", path, error)
        }
        let file = PosixFile(fd: fd, path: path)
        // Who holds the lock, for the message a second writer gets; best effort, the lock itself is what counts.
        let pid = Array("\(getpid())\n".utf8)
        try? file.truncate(to: 0)
        try? file.write(pid, at: 0)
        return PosixLock(file: file)
    }

    private func parent(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }
}

extension String {
    var trimmingSpaces: String {
        String(
            self.drop(while: { $0 == " " || $0 == "\n" }).reversed().drop(while: { $0 == " " || $0 == "\n" }).reversed()
        )
    }
}

/// A `TrellisError.io` naming the call, the path and the system's own words for the error.
package func posixError(_ call: String, _ path: String, _ code: Int32) -> TrellisError {
    TrellisError(.io, "\(call) of \(path) failed: \(String(cString: strerror(code))) (errno \(code))")
}

#if canImport(Darwin)
/// Makes a file's data (or a directory's entries) durable on an Apple platform: `fcntl(F_FULLFSYNC)`, since `fsync`
/// there only hands the data to the drive, whose cache a power cut can lose. A file system that cannot do it (some
/// network, FAT and FUSE volumes) refuses with `EINVAL` or `ENOTSUP`, and there `fsync` is the best there is.
/// Not compiled by this repository's CI, which is Linux only (see README.md, "Platforms").
func fullSync(_ fd: Int32, _ path: String) throws {
    while fcntl(fd, F_FULLFSYNC) == -1 {
        let code = errno
        if code == EINTR { continue }
        guard code == EINVAL || code == ENOTSUP || code == EOPNOTSUPP else {
            throw posixError("fcntl(F_FULLFSYNC)", path, code)
        }
        try retryingInterrupts("fsync", path) { fsync(fd) }
        return
    }
}
#endif

/// Runs a system call until it is not interrupted; throws on any other failure.
@discardableResult
func retryingInterrupts(_ call: String, _ path: String, _ body: () -> Int32) throws -> Int32 {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = errno
        if code != EINTR { throw posixError(call, path, code) }
    }
}

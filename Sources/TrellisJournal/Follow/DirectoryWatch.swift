import TrellisCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Waits for files of a directory to change: inotify on Linux (a write to the durable mark, a manifest renamed into
/// place), otherwise a timer. `stop()` wakes a waiter at once (a pipe in the same `poll`).
final class DirectoryWatch: Sendable {
    /// The inotify descriptor, or -1 when changes are not notified (not Linux, inotify unavailable, or not asked).
    private let notify: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let names: Set<String>

    /// Whether changes are notified (otherwise `wait` returns after its timeout only).
    var notifies: Bool { notify >= 0 }

    init(directory: String, names: Set<String>, notifications: Bool) {
        self.names = names
        var pipeEnds: [Int32] = [-1, -1]
        if pipe(&pipeEnds) == 0 {
            for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            _ = fcntl(pipeEnds[1], F_SETFL, O_NONBLOCK)
        }
        wakeRead = pipeEnds[0]
        wakeWrite = pipeEnds[1]
        var descriptor: Int32 = -1
        #if os(Linux)
        if notifications {
            descriptor = inotify_init1(Int32(IN_NONBLOCK) | Int32(IN_CLOEXEC))
            let mask = UInt32(IN_MODIFY) | UInt32(IN_MOVED_TO) | UInt32(IN_CREATE)
            if descriptor >= 0, inotify_add_watch(descriptor, directory, mask) < 0 {
                close(descriptor)
                descriptor = -1
            }
        }
        #endif
        notify = descriptor
    }

    deinit {
        for fd in [notify, wakeRead, wakeWrite] where fd >= 0 { close(fd) }
    }

    /// Returns true when one of the watched names changed or `timeout` seconds passed, false once `stop()` was called.
    func wait(timeout: Double) -> Bool {
        let milliseconds = Int32(clamping: Int((timeout * 1000).rounded(.up)))
        while true {
            var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            if notify >= 0 { fds.append(pollfd(fd: notify, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                return wakeRead >= 0
            }
            if ready == 0 { return true }
            if fds[0].revents != 0 { return false }
            if drainNotifications() { return true }
        }
    }

    /// Ends every wait, now and later.
    func stop() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    /// Reads every queued event; whether one of them names a watched file (or the queue overflowed).
    private func drainNotifications() -> Bool {
        #if os(Linux)
        var relevant = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(notify, $0.baseAddress, $0.count) }
            guard count > 0 else { return relevant }
            var offset = 0
            // struct inotify_event: wd (4), mask (4), cookie (4), len (4), then len bytes of name, NUL-padded.
            while offset + 16 <= count {
                let mask = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) }
                let length = Int(
                    buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self) })
                let nameBytes = buffer[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 }
                if mask & UInt32(IN_Q_OVERFLOW) != 0 || names.contains(String(decoding: nameBytes, as: UTF8.self)) {
                    relevant = true
                }
                offset += 16 + length
            }
        }
        #else
        return true
        #endif
    }
}

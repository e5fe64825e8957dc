#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A connected TCP socket: the only file that makes socket system calls. Sends loop until every byte is written and
/// retry `EINTR`; nothing here raises `SIGPIPE`.
struct Socket: Sendable {
    let descriptor: Int32

    /// Connects to `host:port` (a name or an address), trying each address the resolver gives, each within `timeout`.
    /// A send blocked for `writeTimeout` (a server that stopped reading) fails instead of blocking for ever.
    static func connect(host: String, port: Int, timeout: Duration, writeTimeout: Duration) throws -> Socket {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let reason = String(cString: gai_strerror(status))
            throw NATSError(.connectionFailed, "cannot resolve \(host): \(reason)")
        }
        defer { freeaddrinfo(first) }
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            entry = address.pointee.ai_next
            let descriptor = Glibc.socket(
                address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
            if descriptor < 0 {
                lastError = Socket.errorText()
                continue
            }
            if let failure = Socket.connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen, timeout) {
                lastError = failure
                _ = Glibc.close(descriptor)
                continue
            }
            var one: Int32 = 1
            _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let (seconds, attoseconds) = writeTimeout.components
            var limit = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
            _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            return Socket(descriptor: descriptor)
        }
        throw NATSError(.connectionFailed, "cannot connect to \(host):\(port): \(lastError)")
    }

    /// A non-blocking connect waited for with `poll`, so that an unreachable host costs `timeout`, not the kernel's
    /// minutes; the socket is blocking again afterwards. Returns the failure's text, or nil when connected.
    private static func connect(
        _ descriptor: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: socklen_t, _ timeout: Duration
    ) -> String? {
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(descriptor, F_SETFL, flags) }
        if Glibc.connect(descriptor, address, length) == 0 { return nil }
        guard errno == EINPROGRESS else { return errorText() }
        var entry = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        let ready = poll(&entry, 1, milliseconds(timeout))
        if ready == 0 { return "timed out after \(timeout)" }
        if ready < 0 { return errorText() }
        var failure: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        _ = getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &size)
        return failure == 0 ? nil : String(cString: strerror(failure))
    }

    /// Writes every byte, or throws `connectionLost`.
    func send(_ bytes: [UInt8]) throws {
        var written = 0
        try bytes.withUnsafeBytes { buffer in
            while written < buffer.count {
                let count = Glibc.send(
                    descriptor, buffer.baseAddress! + written, buffer.count - written, Int32(MSG_NOSIGNAL))
                if count < 0 {
                    if errno == EINTR { continue }
                    if errno == EAGAIN || errno == EWOULDBLOCK {
                        throw NATSError(
                            .connectionLost, "the server took nothing for the write timeout: stale connection")
                    }
                    throw NATSError(.connectionLost, "write failed: \(Socket.errorText())")
                }
                written += count
            }
        }
    }

    /// Reads what is there (blocking until something is), into `buffer`'s start; returns the count, 0 at the end of
    /// the stream or on an error.
    func receive(into buffer: inout [UInt8]) -> Int {
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            return max(count, 0)
        }
    }

    /// Waits until a read would not block; false when `timeout` passed first.
    func waitReadable(_ timeout: Duration) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&entry, 1, Socket.milliseconds(timeout))
            if ready < 0 && errno == EINTR { continue }
            return ready > 0
        }
    }

    /// Ends both directions, which wakes a thread blocked in `receive` (it reads the end of the stream).
    func shutDown() { _ = shutdown(descriptor, Int32(SHUT_RDWR)) }

    /// Releases the descriptor.
    func close() { _ = Glibc.close(descriptor) }

    static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        let total = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return Int32(clamping: max(total, 0))
    }

    static func errorText() -> String { String(cString: strerror(errno)) }
}

import CSQLite
import Foundation

/// What the figures were measured on: the machine line of the report.
struct Machine {
    var cpu: String
    var cores: Int
    var memoryBytes: UInt64
    var build: String
    var sqliteVersion: String
    var tempFileSystem: String
    var trellisStorage: String
    /// The 1-minute load average when the run started: other work on a shared machine slows both engines.
    var loadAverage: Double

    static func describe(tempDirectory: String) -> Machine {
        #if DEBUG
        let build = "debug"
        #else
        let build = "release"
        #endif
        return Machine(
            cpu: cpuModel(), cores: ProcessInfo.processInfo.activeProcessorCount,
            memoryBytes: ProcessInfo.processInfo.physicalMemory, build: build,
            sqliteVersion: String(cString: sqlite3_libversion()), tempFileSystem: fileSystemType(of: tempDirectory),
            trellisStorage: TrellisStorage.description, loadAverage: loadAverage())
    }

    var line: String {
        let gib = Double(memoryBytes) / 1_073_741_824
        return "\(cpu), \(cores) cores, \(String(format: "%.1f", gib)) GiB, \(build) build, SQLite \(sqliteVersion), "
            + "temp files on \(tempFileSystem), load average \(String(format: "%.2f", loadAverage)) at start"
    }

    /// Ordered key/value pairs for the JSON `machine` object.
    var fields: [(String, JSONValue)] {
        [
            ("cpu", .string(cpu)), ("cores", .number(Double(cores))), ("memory_bytes", .number(Double(memoryBytes))),
            ("build", .string(build)), ("sqlite_version", .string(sqliteVersion)),
            ("temp_filesystem", .string(tempFileSystem)), ("trellis_storage", .string(trellisStorage)),
            ("load_average", .number(loadAverage)),
        ]
    }

    private static func loadAverage() -> Double {
        #if os(Linux)
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return Double(text.split(separator: " ").first ?? "") ?? 0
        #else
        var loads = [0.0]
        return getloadavg(&loads, 1) == 1 ? loads[0] : 0
        #endif
    }

    private static func cpuModel() -> String {
        #if canImport(Darwin)
        var size = 0
        guard sysctlbyname("machdep.cpu.brand_string", nil, &size, nil, 0) == 0, size > 0 else { return "unknown CPU" }
        var bytes = [CChar](repeating: 0, count: size)
        guard sysctlbyname("machdep.cpu.brand_string", &bytes, &size, nil, 0) == 0 else { return "unknown CPU" }
        return String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #else
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown CPU" }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            if let colon = line.firstIndex(of: ":") {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return "unknown CPU"
        #endif
    }

    /// The file system that holds the stores (tmpfs would make every fsync free, so the report says which it is):
    /// the type of the longest mount point in /proc/self/mounts that contains `path` (on Apple platforms, `statfs`'s).
    private static func fileSystemType(of path: String) -> String {
        #if canImport(Darwin)
        var info = statfs()
        guard statfs(path, &info) == 0 else { return "unknown" }
        return withUnsafeBytes(of: info.f_fstypename) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
        #else
        guard let text = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return "unknown" }
        var best = (length: -1, type: "unknown")
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let mount = String(fields[1])
            let inside = mount == "/" || path == mount || path.hasPrefix(mount + "/")
            if inside, mount.count > best.length { best = (mount.count, String(fields[2])) }
        }
        return best.type
        #endif
    }
}

/// Resident memory of this process as the kernel reports it. Linux only in full: on Apple platforms the peak comes
/// from `getrusage` and stands in for the resident size too, and nothing resets it or trims the heap, so W10's two
/// figures are the same there (both the growth of the peak, the child being a fresh process).
enum ProcessMemory {
    /// (VmRSS, VmHWM) in bytes, from /proc/self/status; on Apple platforms (ru_maxrss, ru_maxrss).
    static func current() -> (resident: Int, peak: Int) {
        #if canImport(Darwin)
        var usage = rusage()
        guard getrusage(RUSAGE_SELF, &usage) == 0 else { return (0, 0) }
        // Bytes on Apple platforms (kilobytes on Linux).
        let peak = Int(usage.ru_maxrss)
        return (peak, peak)
        #else
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0) }
        var resident = 0
        var peak = 0
        for line in text.split(separator: "\n") {
            if line.hasPrefix("VmRSS:") { resident = kilobytes(line) * 1024 }
            if line.hasPrefix("VmHWM:") { peak = kilobytes(line) * 1024 }
        }
        return (resident, peak)
        #endif
    }

    /// Returns freed heap to the kernel and resets the peak (VmHWM) to the current resident size, so a measurement
    /// starts from what is live now.
    static func settle() {
        trimHeap()
        #if os(Linux)
        if let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") {
            handle.write(Data("5".utf8))
            try? handle.close()
        }
        #endif
    }

    /// glibc's `malloc_trim(0)`: hands freed heap pages back to the kernel. Looked up at run time because the
    /// Glibc module does not export <malloc.h>; a no-op where it is missing.
    static func trimHeap() {
        #if os(Linux)
        typealias Trim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
        #endif
    }

    private static func kilobytes(_ line: Substring) -> Int {
        Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
    }
}

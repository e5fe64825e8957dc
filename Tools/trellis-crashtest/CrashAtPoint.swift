import Foundation
import Synchronization
import TrellisJournal

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The crash points of this process: `TRELLIS_CRASH_AT=after-segment-rename` makes it send itself SIGKILL at that
/// point of the library's write paths, and `TRELLIS_CRASH_SKIP=N` first lets N hits pass. Only this tool reads the
/// variables; the library just calls the handler installed here (`CrashPoints`), and has none in any other process.
enum CrashAtPoint {
    private static let hits = Atomic<Int>(0)

    /// Installs the handler when `TRELLIS_CRASH_AT` names a point; call it first thing.
    static func installFromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let point = environment["TRELLIS_CRASH_AT"], !point.isEmpty else { return }
        let skip = Int(environment["TRELLIS_CRASH_SKIP"] ?? "") ?? 0
        CrashPoints.install(
            CrashPoints.Handler(point: point) {
                if hits.wrappingAdd(1, ordering: .sequentiallyConsistent).oldValue >= skip { kill(getpid(), SIGKILL) }
            })
    }
}

import Foundation
import Synchronization
import TrellisCore
import TrellisGraph

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Named places in the journal's write paths where the crash suite's child process (`trellis-crashtest`) kills
/// itself with SIGKILL: `TRELLIS_CRASH_AT=after-segment-rename` dies there, `TRELLIS_CRASH_SKIP=N` first lets N hits
/// pass. Without the variable each hit costs one comparison against nil.
///
/// The points: before-/after-segment-rename, before-/after-manifest-rename, before-checkpoint-sync,
/// after-checkpoint-rename, before-unlink-old, mid-record (half a batch of frames written), after-tail-backup.
package enum CrashPoints {
    static let armed: String? = ProcessInfo.processInfo.environment["TRELLIS_CRASH_AT"]
    private static let skip = Int(ProcessInfo.processInfo.environment["TRELLIS_CRASH_SKIP"] ?? "") ?? 0
    private static let hits = Atomic<Int>(0)

    /// Whether the process is set to die at `name` (its hit may still be skipped).
    static func isArmed(_ name: String) -> Bool { armed == name }

    /// Kills the process when `name` is the armed point and its skipped hits are used up.
    package static func hit(_ name: @autoclosure () -> String) {
        guard let armed, armed == name() else { return }
        if hits.wrappingAdd(1, ordering: .sequentiallyConsistent).oldValue >= skip { kill(getpid(), SIGKILL) }
    }

    /// The kind of store file at `path`, for naming rename points: segment, manifest, checkpoint or file.
    static func kind(_ path: String) -> String {
        let name = String(path.split(separator: "/").last ?? "")
        if JournalFormat.segmentID(name) != nil { return "segment" }
        if name == JournalFormat.manifestName { return "manifest" }
        if JournalFormat.checkpointSequence(name) != nil { return "checkpoint" }
        return "file"
    }
}

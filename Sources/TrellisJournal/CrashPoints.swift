import Synchronization
import TrellisCore
import TrellisGraph

/// Named places in the write paths where a crash test can stop the process. The library only calls the hook: what a
/// hit does is up to a handler that a test harness installs, and no handler is installed unless one does
/// (`trellis-crashtest` installs one at start that reads `TRELLIS_CRASH_AT` and `TRELLIS_CRASH_SKIP` and sends
/// itself SIGKILL). An app's process never has one, so no environment variable can make the library kill it, and a
/// hit costs one atomic load that finds nil.
///
/// The points: before-/after-segment-rename, before-/after-manifest-rename, before-checkpoint-sync,
/// after-checkpoint-rename, before-unlink-old, mid-record (half a batch of frames written), after-fragment (a frame of
/// a record written frame by frame), mid-fragment (half of such a frame written), after-tail-backup,
/// after-migration-segment, after-migration-manifest.
package enum CrashPoints {
    /// What the process does at one named point.
    package final class Handler: Sendable {
        /// The point to stop at; hits of every other point pass.
        package let point: String
        /// Runs at each hit of `point` (it may let some hits pass, or not return).
        package let action: @Sendable () -> Void

        package init(point: String, action: @escaping @Sendable () -> Void) {
            self.point = point
            self.action = action
        }
    }

    private static let handler = AtomicLazyReference<Handler>()

    /// Installs `handler` for the rest of the process; only the first installation counts. Returns whether this one
    /// is the installed handler.
    @discardableResult
    package static func install(_ handler: Handler) -> Bool {
        self.handler.storeIfNil(handler) === handler
    }

    /// Whether a handler is installed (never, in an app's process).
    package static var isInstalled: Bool { handler.load() != nil }

    /// Whether an installed handler stops at `name` (its hit may still be let pass), so that a write path can take
    /// the shape the point needs.
    static func isArmed(_ name: String) -> Bool { handler.load()?.point == name }

    /// Runs the installed handler's action when it stops at `name`; does nothing without a handler.
    package static func hit(_ name: @autoclosure () -> String) {
        guard let handler = handler.load(), handler.point == name() else { return }
        handler.action()
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

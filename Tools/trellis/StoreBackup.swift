import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The safety steps around a repair: is a writer holding the store, and a full copy of it before anything changes.
enum StoreBackup {
    /// Whether another process (or another open in this one) holds the store's writer lock: `flock` on `LOCK`, the
    /// file the library locks. Probing takes the lock for an instant and gives it back.
    static func isLocked(_ directory: URL) -> Bool {
        let fd = open(directory.appendingPathComponent("LOCK").path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK
    }

    /// Copies the whole store directory next to it (`STORE.backup-20261129-113001`, or `destination`), so that a
    /// repair that drops the wrong thing can be undone by hand. Returns where the copy is.
    static func copy(_ directory: URL, to destination: String?) throws -> URL {
        let target: URL
        if let destination {
            target = URL(fileURLWithPath: destination)
        } else {
            let stamp = ValueFormat.timestamp(Date()).prefix(19).replacingOccurrences(of: "-", with: "")
                .replacingOccurrences(of: ":", with: "").replacingOccurrences(of: "T", with: "-")
            target = URL(fileURLWithPath: directory.standardizedFileURL.path + ".backup-" + stamp)
        }
        guard !FileManager.default.fileExists(atPath: target.path) else {
            throw CommandFailure("the backup destination \(target.path) already exists; nothing was changed")
        }
        do {
            try FileManager.default.copyItem(at: directory, to: target)
        } catch {
            // A partial copy is no backup: remove it, and say so if that fails too.
            var left = ""
            do {
                if FileManager.default.fileExists(atPath: target.path) {
                    try FileManager.default.removeItem(at: target)
                }
            } catch let removal {
                left =
                    "; the partial copy could not be removed either (\(removal.localizedDescription)): delete it by hand"
            }
            throw CommandFailure(
                "could not back the store up to \(target.path): \(error.localizedDescription)\(left); the store was "
                    + "not changed. Free some space, or pass --backup DIR with DIR on another disk")
        }
        return target
    }
}

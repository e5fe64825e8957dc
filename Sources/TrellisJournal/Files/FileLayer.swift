import TrellisCore
import TrellisGraph

/// Everything the journal does to files and directories, so that tests can put a fault-injecting layer underneath
/// (the F harness of the crash matrix) and the real store uses `PosixFileLayer`.
///
/// Paths are absolute strings. Implementations make each call all-or-error: a write either writes every byte or
/// throws a `TrellisError` with code `.io` that names the operation, the path and the system error.
package protocol FileLayer: Sendable {
    /// Whether something exists at `path`, and whether it is a directory.
    func exists(_ path: String) -> (exists: Bool, isDirectory: Bool)
    /// Creates the directory (owner-only permissions) if it is missing, and makes its entry durable in its parent.
    func createDirectory(_ path: String) throws
    /// The names of the entries of a directory, in no particular order.
    func list(_ directory: String) throws -> [String]
    /// Opens a file; `.create` creates it empty (replacing any file of that name), owner-only.
    func open(_ path: String, _ mode: FileOpenMode) throws -> any LayerFile
    func rename(_ from: String, to: String) throws
    /// Gives the file at `existing` a second name `new` (`link(2)`): both names reach the same bytes, so removing
    /// either later keeps them. Throws (`EEXIST`) when `new` exists; the entry is durable after `syncDirectory`.
    func link(_ existing: String, to new: String) throws
    func remove(_ path: String) throws
    /// Makes the directory's entries (creates, renames, unlinks) durable.
    func syncDirectory(_ path: String) throws
    /// Takes an exclusive lock on the file at `path` (creating it), held until the returned lock is released;
    /// throws `TrellisError.locked` when another writer holds it.
    func lockExclusively(_ path: String) throws -> any LayerLock
    /// Opens the durable-watermark file for followers (`DurableMark`), creating it owner-only when it is missing and
    /// never truncating it; nil when this layer keeps none.
    func openDurableMark(_ path: String) -> (any LayerFile)?
    /// Whether a durable journal on this layer writes zeros ahead of its records while idle (see
    /// `Journal.zeroAheadIfDue`): a disk's file system gains from it; a layer in memory does not.
    var writesZerosAhead: Bool { get }
}

/// How `FileLayer.open` opens a file.
package enum FileOpenMode: Sendable {
    case read
    case readWrite
    case create
}

extension FileLayer {
    /// No mark: the simulated layer of the crash tests keeps none, as the mark is no part of the store's durable
    /// state and their operation counts stay those of the journal alone.
    package func openDurableMark(_ path: String) -> (any LayerFile)? { nil }

    /// No zeros ahead unless a layer says so: the simulated layer of the crash tests writes them only when asked
    /// (`simulateZeroingAhead`), so that their recorded operations stay those of the commits alone, in the same order
    /// on every run.
    package var writesZerosAhead: Bool { false }

    /// Writes `bytes` to a new file at `path` through a temporary name, syncs it, renames it into place and syncs
    /// the directory: after this returns the file is durable under its final name, and a crash at any point leaves
    /// either the old file or the new one, never a mix.
    package func writeAtomically(_ bytes: [UInt8], to path: String, directory: String) throws {
        let temporary = path + ".tmp"
        let file = try open(temporary, .create)
        do {
            try file.write(bytes, at: 0)
            try file.sync()
            file.close()
        } catch {
            file.close()
            throw removingTemporary(temporary, after: error)
        }
        CrashPoints.hit("before-" + CrashPoints.kind(path) + "-rename")
        try rename(temporary, to: path)
        CrashPoints.hit("after-" + CrashPoints.kind(path) + "-rename")
        try syncDirectory(directory)
    }

    /// Removes the temporary file a failed write left and returns `error` to throw; when the removal fails too, the
    /// error says so (the file is unreferenced, and the next open removes it), so that nothing is swallowed.
    package func removingTemporary(_ path: String, after error: any Error) -> any Error {
        do {
            try remove(path)
            return error
        } catch let removal {
            guard let first = error as? TrellisError else { return error }
            let cause = (removal as? TrellisError)?.message ?? "\(removal)"
            return TrellisError(
                first.code,
                first.message + "; the temporary file could not be removed either (the next open removes it): "
                    + cause)
        }
    }

    /// Reads a whole file (bounded by `limit`, so a damaged or foreign file cannot make us allocate without bound).
    package func readWhole(_ path: String, limit: Int) throws -> [UInt8] {
        let file = try open(path, .read)
        defer { file.close() }
        let size = try file.size()
        guard size <= limit else {
            throw TrellisError(.corrupt, "\(path) is \(size) bytes, more than the \(limit) such a file can hold")
        }
        return try file.read(at: 0, count: size)
    }
}

/// Joins a directory and a file name.
package func joinPath(_ directory: String, _ name: String) -> String {
    directory.hasSuffix("/") ? directory + name : directory + "/" + name
}

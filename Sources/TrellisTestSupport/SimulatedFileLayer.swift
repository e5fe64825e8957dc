import Dispatch
import Synchronization
import TrellisCore
import TrellisJournal

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An in-memory file layer that remembers what a real disk would keep after a power cut, and fails on demand: the
/// F harness of the crash matrix.
///
/// Like LevelDB's fault-injection environment it remembers, per file, which bytes were synced, and per directory,
/// which entries (creates, renames, unlinks) were synced; like SQLite's crash VFS a crash can drop, keep, keep a
/// random part of, tear or garble what was not synced. Any operation can be made to fail (the Nth one, once or for
/// good, with `EIO` or `ENOSPC`, a failing write optionally tearing), and every operation is recorded in order.
///
/// ```swift
/// let disk = SimulatedFileLayer()
/// disk.inject(.init(.sync, error: EIO))             // the first fsync fails
/// ... use a store on it ...
/// let after = disk.crash(.init(data: .dropUnsynced)) // what survives; `disk` is dead from now on
/// ```
package final class SimulatedFileLayer: FileLayer {
    /// The kinds of operation, for recording and for aiming faults.
    package enum Operation: String, Sendable, CaseIterable {
        case mkdir, list, open, create, read, size, write, truncate, sync, rename, link, remove, syncDirectory, lock
    }

    /// One recorded operation.
    package struct Event: Sendable, Equatable, CustomStringConvertible {
        package var operation: Operation
        package var path: String
        package var description: String { "\(operation.rawValue) \(path)" }
    }

    /// A failure to inject: the `nth` matching operation (counted from when the fault is injected) fails, and with
    /// `persistent` every matching one after it too.
    package struct Fault: Sendable {
        package var operations: Set<Operation>
        package var pathContains: String?
        package var nth: Int
        package var persistent: Bool
        package var error: Int32
        /// A failing write first stores this fraction of its bytes (a short write; a torn frame on disk).
        package var tearFraction: Double?
        package var seen = 0

        package init(
            _ operations: Set<Operation> = [], pathContains: String? = nil, nth: Int = 1, persistent: Bool = false,
            error: Int32 = EIO, tearFraction: Double? = nil
        ) {
            self.operations = operations
            self.pathContains = pathContains
            self.nth = nth
            self.persistent = persistent
            self.error = error
            self.tearFraction = tearFraction
        }

        package init(
            _ operation: Operation, pathContains: String? = nil, nth: Int = 1, persistent: Bool = false,
            error: Int32 = EIO, tearFraction: Double? = nil
        ) {
            self.init(
                [operation], pathContains: pathContains, nth: nth, persistent: persistent, error: error,
                tearFraction: tearFraction)
        }
    }

    /// What a crash keeps.
    package struct CrashPolicy: Sendable {
        package enum Data: Sendable {
            /// Only synced bytes survive.
            case dropUnsynced
            /// Every written byte survives (the process died, the machine did not).
            case keepUnsynced
            /// Each unsynced 512-byte sector survives or not, at random, and the length lands between the synced
            /// and the written one.
            case keepRandomSectors(seed: UInt64)
            /// Everything written survives, except that one unsynced sector is filled with random bytes.
            case garbleRandomSector(seed: UInt64)
            /// Unsynced bytes survive up to a random offset (a torn write).
            case tearUnsynced(seed: UInt64)
            /// Everything written survives, except that the unsynced bytes of one sector are random: a torn sector
            /// on a disk that never harms the bytes around a write (SQLite's "powersafe overwrite").
            case garbleUnsyncedBytes(seed: UInt64)
            /// Preallocated extents: the file keeps its written length (its space was reserved), and each unsynced
            /// 512-byte sector independently reaches the disk or reads as it was last synced (zeros where nothing
            /// was synced). A disk may write the sectors of one request in any order, so a later sector of an
            /// unsynced batch can survive while an earlier one does not: `[valid][zeros][valid]`, a hole.
            case keepSectorsIndependently(seed: UInt64)
        }
        package var data: Data
        /// Whether directory entries not yet synced survive (they often do; crash tests must assume they may not).
        package var keepUnsyncedEntries: Bool

        package init(data: Data = .dropUnsynced, keepUnsyncedEntries: Bool = false) {
            self.data = data
            self.keepUnsyncedEntries = keepUnsyncedEntries
        }
    }

    package static let sectorSize = 512

    /// A file's bytes as written, and as last synced.
    package struct Node: Sendable {
        package var current: [UInt8] = []
        package var synced: [UInt8] = []
        /// Bytes a failed sync marked clean without writing them (`failedSyncCleansPages`): offset → what the disk
        /// holds there (the byte synced before, or zero). Reads still see `current`; a successful sync leaves these
        /// offsets as they are on disk, and only writing them again makes them dirty (and syncable) again.
        package var cleanNotDurable: [Int: UInt8] = [:]
    }

    /// A directory's entries as they are, and as last synced.
    package struct Directory: Sendable {
        package var entries: [String: Int] = [:]
        package var durableEntries: [String: Int] = [:]
        package var isDurable = false
    }

    /// The whole simulated disk, under one lock.
    package struct State: Sendable {
        package var nodes: [Int: Node] = [:]
        package var nextNode = 1
        package var directories: [String: Directory] = ["/": Directory(isDurable: true)]
        package var faults: [Fault] = []
        package var events: [Event] = []
        package var recording = true
        package var haltAfter: Int?
        package var operationCount = 0
        package var dead = false
        package var locks: Set<String> = []
        /// Seconds each file sync takes (outside the disk's lock), to make group commit observable.
        package var syncDelay: Double = 0
        /// The largest byte count one read asked for (tests check that damaged lengths are not trusted).
        package var largestRead = 0
        /// "fsyncgate": a failed file sync marks the file's unsynced bytes clean but not durable, as Linux may after
        /// an `fdatasync` error (see `Node.cleanNotDurable` and `failedSyncCleansPages()`).
        package var failedSyncCleansPages = false
        /// Whether `preallocate(to:)` reserves space (the file grows with zeros, as `posix_fallocate` makes it),
        /// rather than reserving nothing as a file system without it does (the default).
        package var preallocates = false
        package var zeroesAhead = false
        /// Syncs to hold at a gate (see `block`).
        package var gates: [(operation: Operation, pathContains: String, skip: Int, gate: Gate)] = []
    }

    /// Where a blocked sync waits, outside the disk's lock, until the test lets it go: to prove that others go on
    /// meanwhile.
    package final class Gate: Sendable {
        private let reached = DispatchSemaphore(value: 0)
        private let opened = DispatchSemaphore(value: 0)

        /// Whether an operation reached the gate within `seconds`.
        package func waitUntilReached(seconds: Double) -> Bool { reached.wait(timeout: .now() + seconds) == .success }

        /// Lets the held operation (and any later one) through.
        package func release() { opened.signal() }

        func hold() {
            reached.signal()
            opened.wait()
            opened.signal()
        }
    }

    package let state: Mutex<State>

    package init() { state = Mutex(State()) }

    package init(_ initial: State) { state = Mutex(initial) }

    // MARK: Test controls

    package func inject(_ fault: Fault) { state.locked { $0.faults.append(fault) } }

    package func clearFaults() { state.locked { $0.faults.removeAll() } }

    /// How many of the injected faults have fired (their `nth` matching operation happened).
    package var firedFaults: Int { state.locked { s in s.faults.filter { $0.seen >= $0.nth }.count } }

    /// Holds the `nth` `.sync` or `.syncDirectory` whose path contains `pathContains` (counted from now) before it
    /// runs, until the returned gate is released.
    package func block(_ operation: Operation, pathContains: String, nth: Int = 1) -> Gate {
        precondition(operation == .sync || operation == .syncDirectory, "only syncs can be blocked")
        let gate = Gate()
        state.locked { $0.gates.append((operation, pathContains, nth - 1, gate)) }
        return gate
    }

    /// Waits at the gate aimed at this operation, if there is one (outside the disk's lock).
    package func passGate(_ operation: Operation, _ path: String) {
        let gate = state.locked { s -> Gate? in
            guard let i = s.gates.firstIndex(where: { $0.operation == operation && path.contains($0.pathContains) })
            else { return nil }
            if s.gates[i].skip > 0 {
                s.gates[i].skip -= 1
                return nil
            }
            return s.gates.remove(at: i).gate
        }
        gate?.hold()
    }

    /// Turns on the "fsyncgate" mode: from now on a file sync that fails (an injected `EIO`, say) leaves that file's
    /// unsynced bytes in the page cache, marked clean: reads still return them, later successful syncs do not write
    /// them, and a crash loses them (the bytes synced before, or zeros) while keeping bytes written and synced after
    /// them. Writing a byte again makes it dirty again. Granularity is the byte, the worst case of a 4 KiB page.
    package func failedSyncCleansPages(_ on: Bool = true) { state.locked { $0.failedSyncCleansPages = on } }

    /// Makes `preallocate(to:)` reserve space as `posix_fallocate` does: the file grows to the size with zeros,
    /// which the next sync makes durable, so later appends overwrite synced zeros (and a crash of
    /// `.keepSectorsIndependently` or `.keepRandomSectors` can leave any of their sectors zero).
    package func simulatePreallocation(_ on: Bool = true) { state.locked { $0.preallocates = on } }

    /// Lets a durable journal on this layer write zeros ahead of its records while idle (`FileLayer.writesZerosAhead`);
    /// off by default, since those writes come at times that vary from run to run.
    package func simulateZeroingAhead(_ on: Bool = true) { state.locked { $0.zeroesAhead = on } }

    package var writesZerosAhead: Bool { state.locked { $0.zeroesAhead } }

    /// How many bytes of `path` a failed sync left clean but not durable (the "fsyncgate" mode).
    package func cleanNotDurableBytes(_ path: String) -> Int {
        state.locked { s in
            let (dir, name) = Self.split(path)
            guard let node = s.directories[dir]?.entries[name] else { return 0 }
            return s.nodes[node]?.cleanNotDurable.count ?? 0
        }
    }

    /// Every operation so far, in order.
    package var events: [Event] { state.locked { $0.events } }

    package var operationCount: Int { state.locked { $0.operationCount } }

    /// The largest byte count a single read has asked for since the layer was made or `resetLargestRead()`.
    package var largestRead: Int { state.locked { $0.largestRead } }

    package func resetLargestRead() { state.locked { $0.largestRead = 0 } }

    /// Makes every operation after the `count`th fail with `EIO`, as if the machine stopped there.
    package func halt(afterOperations count: Int) { state.locked { $0.haltAfter = count } }

    /// An independent copy of the disk as it is now (written data and entries, synced or not); this one lives on.
    package func copy() -> SimulatedFileLayer {
        state.locked { s in
            var copy = State()
            copy.nodes = s.nodes
            copy.nextNode = s.nextNode
            copy.directories = s.directories
            return SimulatedFileLayer(copy)
        }
    }

    /// The bytes a file holds now (written, synced or not), or nil when there is no such file.
    package func contents(_ path: String) -> [UInt8]? {
        state.locked { s in
            let (dir, name) = Self.split(path)
            guard let node = s.directories[dir]?.entries[name] else { return nil }
            return s.nodes[node]?.current
        }
    }

    /// The bytes of a file as last synced (what survives a crash that drops everything unsynced), or nil when there
    /// is no such file.
    package func syncedContents(_ path: String) -> [UInt8]? {
        state.locked { s in
            let (dir, name) = Self.split(path)
            guard let node = s.directories[dir]?.entries[name] else { return nil }
            return s.nodes[node]?.synced
        }
    }

    /// Replaces a file's bytes as if they had been written and synced (a byte-level mutator for tests).
    package func setContents(_ path: String, _ bytes: [UInt8]) {
        state.locked { s in
            let (dir, name) = Self.split(path)
            guard let node = s.directories[dir]?.entries[name] else { return }
            s.nodes[node] = Node(current: bytes, synced: bytes)
        }
    }

    // MARK: FileLayer

    package func exists(_ path: String) -> (exists: Bool, isDirectory: Bool) {
        state.locked { s in
            if s.directories[path] != nil { return (true, true) }
            let (dir, name) = Self.split(path)
            return (s.directories[dir]?.entries[name] != nil, false)
        }
    }

    package func createDirectory(_ path: String) throws {
        try state.locked { s in
            try s.begin(.mkdir, path)
            let (parent, _) = Self.split(path)
            if s.directories[path] == nil {
                guard s.directories[parent] != nil else { throw Self.error(ENOENT, "mkdir", path) }
                s.directories[path] = Directory()
            }
            // As `PosixFileLayer`: an existing directory's entry is synced again.
            try s.begin(.syncDirectory, parent)
            s.directories[path]!.isDurable = s.directories[parent]!.isDurable
        }
    }

    package func list(_ directory: String) throws -> [String] {
        try state.locked { s in
            try s.begin(.list, directory)
            guard let dir = s.directories[directory] else { throw Self.error(ENOENT, "opendir", directory) }
            return Array(dir.entries.keys)
        }
    }

    package func open(_ path: String, _ mode: FileOpenMode) throws -> any LayerFile {
        try state.locked { s in
            let (dir, name) = Self.split(path)
            guard s.directories[dir] != nil else { throw Self.error(ENOENT, "open", path) }
            switch mode {
            case .read, .readWrite:
                try s.begin(.open, path)
                guard let node = s.directories[dir]!.entries[name] else { throw Self.error(ENOENT, "open", path) }
                return SimulatedFile(layer: self, node: node, path: path, writable: mode == .readWrite)
            case .create:
                try s.begin(.create, path)
                if let node = s.directories[dir]!.entries[name] {
                    s.nodes[node]!.current = []
                    s.nodes[node]!.cleanNotDurable = [:]
                    return SimulatedFile(layer: self, node: node, path: path, writable: true)
                }
                let node = s.nextNode
                s.nextNode += 1
                s.nodes[node] = Node()
                s.directories[dir]!.entries[name] = node
                return SimulatedFile(layer: self, node: node, path: path, writable: true)
            }
        }
    }

    package func rename(_ from: String, to: String) throws {
        try state.locked { s in
            try s.begin(.rename, from + " -> " + to)
            let (fromDir, fromName) = Self.split(from)
            let (toDir, toName) = Self.split(to)
            guard let node = s.directories[fromDir]?.entries[fromName], s.directories[toDir] != nil else {
                throw Self.error(ENOENT, "rename", from)
            }
            s.directories[fromDir]!.entries[fromName] = nil
            s.directories[toDir]!.entries[toName] = node
        }
    }

    package func link(_ existing: String, to new: String) throws {
        try state.locked { s in
            try s.begin(.link, existing + " -> " + new)
            let (fromDir, fromName) = Self.split(existing)
            let (toDir, toName) = Self.split(new)
            guard let node = s.directories[fromDir]?.entries[fromName], s.directories[toDir] != nil else {
                throw Self.error(ENOENT, "link", existing)
            }
            guard s.directories[toDir]!.entries[toName] == nil else { throw Self.error(EEXIST, "link", new) }
            s.directories[toDir]!.entries[toName] = node
        }
    }

    package func remove(_ path: String) throws {
        try state.locked { s in
            try s.begin(.remove, path)
            let (dir, name) = Self.split(path)
            guard s.directories[dir]?.entries.removeValue(forKey: name) != nil else {
                throw Self.error(ENOENT, "unlink", path)
            }
        }
    }

    package func syncDirectory(_ path: String) throws {
        passGate(.syncDirectory, path)
        try state.locked { s in
            try s.begin(.syncDirectory, path)
            guard let dir = s.directories[path] else { throw Self.error(ENOENT, "fsync", path) }
            s.directories[path]!.durableEntries = dir.entries
        }
    }

    package func lockExclusively(_ path: String) throws -> any LayerLock {
        try state.locked { s in
            try s.begin(.lock, path)
            guard s.locks.insert(path).inserted else {
                throw TrellisError(.locked, "\(path) is locked by another writer of this simulated disk")
            }
            let (dir, name) = Self.split(path)
            if s.directories[dir]?.entries[name] == nil, s.directories[dir] != nil {
                s.nodes[s.nextNode] = Node()
                s.directories[dir]!.entries[name] = s.nextNode
                s.nextNode += 1
            }
            return SimulatedLock(layer: self, path: path)
        }
    }

    package static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let dir = slash == path.startIndex ? "/" : String(path[..<slash])
        return (dir, String(path[path.index(after: slash)...]))
    }

    package static func error(_ code: Int32, _ call: String, _ path: String) -> TrellisError {
        posixError(call, path, code)
    }
}

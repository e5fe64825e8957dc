import Synchronization

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
final class SimulatedFileLayer: FileLayer {
    /// The kinds of operation, for recording and for aiming faults.
    enum Operation: String, Sendable, CaseIterable {
        case mkdir, list, open, create, read, size, write, truncate, sync, rename, remove, syncDirectory, lock
    }

    /// One recorded operation.
    struct Event: Sendable, Equatable, CustomStringConvertible {
        var operation: Operation
        var path: String
        var description: String { "\(operation.rawValue) \(path)" }
    }

    /// A failure to inject: the `nth` matching operation (counted from when the fault is injected) fails, and with
    /// `persistent` every matching one after it too.
    struct Fault: Sendable {
        var operations: Set<Operation>
        var pathContains: String?
        var nth: Int
        var persistent: Bool
        var error: Int32
        /// A failing write first stores this fraction of its bytes (a short write; a torn frame on disk).
        var tearFraction: Double?
        var seen = 0

        init(
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

        init(
            _ operation: Operation, pathContains: String? = nil, nth: Int = 1, persistent: Bool = false,
            error: Int32 = EIO, tearFraction: Double? = nil
        ) {
            self.init(
                [operation], pathContains: pathContains, nth: nth, persistent: persistent, error: error,
                tearFraction: tearFraction)
        }
    }

    /// What a crash keeps.
    struct CrashPolicy: Sendable {
        enum Data: Sendable {
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
        }
        var data: Data
        /// Whether directory entries not yet synced survive (they often do; crash tests must assume they may not).
        var keepUnsyncedEntries: Bool

        init(data: Data = .dropUnsynced, keepUnsyncedEntries: Bool = false) {
            self.data = data
            self.keepUnsyncedEntries = keepUnsyncedEntries
        }
    }

    static let sectorSize = 512

    struct Node: Sendable {
        var current: [UInt8] = []
        var synced: [UInt8] = []
    }

    struct Directory: Sendable {
        var entries: [String: Int] = [:]
        var durableEntries: [String: Int] = [:]
        var isDurable = false
    }

    struct State: Sendable {
        var nodes: [Int: Node] = [:]
        var nextNode = 1
        var directories: [String: Directory] = ["/": Directory(isDurable: true)]
        var faults: [Fault] = []
        var events: [Event] = []
        var recording = true
        var haltAfter: Int?
        var operationCount = 0
        var dead = false
        var locks: Set<String> = []
        /// The largest byte count one read asked for (tests check that damaged lengths are not trusted).
        var largestRead = 0
    }

    let state: Mutex<State>

    init() { state = Mutex(State()) }

    private init(_ initial: State) { state = Mutex(initial) }

    // MARK: Test controls

    func inject(_ fault: Fault) { state.withLock { $0.faults.append(fault) } }

    func clearFaults() { state.withLock { $0.faults.removeAll() } }

    /// Every operation so far, in order.
    var events: [Event] { state.withLock { $0.events } }

    var operationCount: Int { state.withLock { $0.operationCount } }

    /// The largest byte count a single read has asked for since the layer was made or `resetLargestRead()`.
    var largestRead: Int { state.withLock { $0.largestRead } }

    func resetLargestRead() { state.withLock { $0.largestRead = 0 } }

    /// Makes every operation after the `count`th fail with `EIO`, as if the machine stopped there.
    func halt(afterOperations count: Int) { state.withLock { $0.haltAfter = count } }

    /// The disk as it would be found after a power cut now, as a new layer; this one fails every later operation,
    /// so threads of the store that "died" cannot touch the survivor.
    func crash(_ policy: CrashPolicy = CrashPolicy()) -> SimulatedFileLayer {
        state.withLock { s in
            s.dead = true
            var random = SplitMix64(seed: policy.data.seed)
            var next = State()
            for (path, directory) in s.directories.sorted(by: { $0.key < $1.key }) where directory.isDurable {
                let entries = policy.keepUnsyncedEntries ? directory.entries : directory.durableEntries
                var survivor = Directory(isDurable: true)
                for (name, node) in entries.sorted(by: { $0.key < $1.key }) {
                    guard let old = s.nodes[node] else { continue }
                    let data = Self.survivingData(old, policy.data, &random)
                    next.nodes[next.nextNode] = Node(current: data, synced: data)
                    survivor.entries[name] = next.nextNode
                    next.nextNode += 1
                }
                survivor.durableEntries = survivor.entries
                next.directories[path] = survivor
            }
            return SimulatedFileLayer(next)
        }
    }

    private static func survivingData(_ node: Node, _ policy: CrashPolicy.Data, _ random: inout SplitMix64) -> [UInt8] {
        let (synced, current) = (node.synced, node.current)
        if synced == current { return current }
        switch policy {
        case .dropUnsynced: return synced
        case .keepUnsynced: return current
        case .tearUnsynced:
            guard current.count > synced.count, current.starts(with: synced) else { return synced }
            return Array(current.prefix(synced.count + Int(random.next() % UInt64(current.count - synced.count + 1))))
        case .keepRandomSectors:
            let length =
                min(synced.count, current.count)
                + Int(random.next() % UInt64(abs(current.count - synced.count) + 1))
            var out = [UInt8](repeating: 0, count: length)
            var sector = 0
            while sector < length {
                let end = min(sector + sectorSize, length)
                let takeNew = random.next() & 1 == 0
                for i in sector..<end {
                    let source = takeNew ? current : synced
                    out[i] = i < source.count ? source[i] : (i < current.count ? current[i] : 0)
                }
                sector = end
            }
            return out
        case .garbleUnsyncedBytes:
            var out = current
            let sectors = stride(from: 0, to: current.count, by: sectorSize).filter { start in
                (start..<min(start + sectorSize, current.count)).contains {
                    $0 >= synced.count || current[$0] != synced[$0]
                }
            }
            guard let chosen = sectors.randomElement(using: &random) else { return out }
            for i in chosen..<min(chosen + sectorSize, out.count) where i >= synced.count || current[i] != synced[i] {
                out[i] = UInt8(truncatingIfNeeded: random.next())
            }
            return out
        case .garbleRandomSector:
            var out = current
            var dirty: [Int] = []
            var sector = 0
            while sector < current.count {
                let end = min(sector + sectorSize, current.count)
                if sector >= synced.count || current[sector..<end] != synced[sector..<min(end, synced.count)] {
                    dirty.append(sector)
                }
                sector = end
            }
            guard let chosen = dirty.randomElement(using: &random) else { return out }
            for i in chosen..<min(chosen + sectorSize, out.count) { out[i] = UInt8(truncatingIfNeeded: random.next()) }
            return out
        }
    }

    /// An independent copy of the disk as it is now (written data and entries, synced or not); this one lives on.
    func copy() -> SimulatedFileLayer {
        state.withLock { s in
            var copy = State()
            copy.nodes = s.nodes
            copy.nextNode = s.nextNode
            copy.directories = s.directories
            return SimulatedFileLayer(copy)
        }
    }

    /// The bytes a file holds now (written, synced or not), or nil when there is no such file.
    func contents(_ path: String) -> [UInt8]? {
        state.withLock { s in
            let (dir, name) = Self.split(path)
            guard let node = s.directories[dir]?.entries[name] else { return nil }
            return s.nodes[node]?.current
        }
    }

    /// Replaces a file's bytes as if they had been written and synced (a byte-level mutator for tests).
    func setContents(_ path: String, _ bytes: [UInt8]) {
        state.withLock { s in
            let (dir, name) = Self.split(path)
            guard let node = s.directories[dir]?.entries[name] else { return }
            s.nodes[node] = Node(current: bytes, synced: bytes)
        }
    }

    // MARK: FileLayer

    func exists(_ path: String) -> (exists: Bool, isDirectory: Bool) {
        state.withLock { s in
            if s.directories[path] != nil { return (true, true) }
            let (dir, name) = Self.split(path)
            return (s.directories[dir]?.entries[name] != nil, false)
        }
    }

    func createDirectory(_ path: String) throws {
        try state.withLock { s in
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

    func list(_ directory: String) throws -> [String] {
        try state.withLock { s in
            try s.begin(.list, directory)
            guard let dir = s.directories[directory] else { throw Self.error(ENOENT, "opendir", directory) }
            return Array(dir.entries.keys)
        }
    }

    func open(_ path: String, _ mode: FileOpenMode) throws -> any LayerFile {
        try state.withLock { s in
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

    func rename(_ from: String, to: String) throws {
        try state.withLock { s in
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

    func remove(_ path: String) throws {
        try state.withLock { s in
            try s.begin(.remove, path)
            let (dir, name) = Self.split(path)
            guard s.directories[dir]?.entries.removeValue(forKey: name) != nil else {
                throw Self.error(ENOENT, "unlink", path)
            }
        }
    }

    func syncDirectory(_ path: String) throws {
        try state.withLock { s in
            try s.begin(.syncDirectory, path)
            guard let dir = s.directories[path] else { throw Self.error(ENOENT, "fsync", path) }
            s.directories[path]!.durableEntries = dir.entries
        }
    }

    func lockExclusively(_ path: String) throws -> any LayerLock {
        try state.withLock { s in
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

    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let dir = slash == path.startIndex ? "/" : String(path[..<slash])
        return (dir, String(path[path.index(after: slash)...]))
    }

    static func error(_ code: Int32, _ call: String, _ path: String) -> TrellisError {
        posixError(call, path, code)
    }
}

extension SimulatedFileLayer.CrashPolicy.Data {
    var seed: UInt64 {
        switch self {
        case .dropUnsynced, .keepUnsynced: return 0
        case .keepRandomSectors(let seed), .garbleRandomSector(let seed), .tearUnsynced(let seed),
            .garbleUnsyncedBytes(let seed):
            return seed
        }
    }
}

extension SimulatedFileLayer.State {
    /// Counts and records an operation, then throws if the disk is dead, halted, or a fault aims at it.
    mutating func begin(_ operation: SimulatedFileLayer.Operation, _ path: String) throws {
        _ = try check(operation, path)
    }

    /// As `begin`, but returns (instead of throwing) a fault that should tear a write: the fraction of its bytes to
    /// store and the error to throw after.
    mutating func check(_ operation: SimulatedFileLayer.Operation, _ path: String) throws -> (Double, TrellisError)? {
        guard !dead else { throw SimulatedFileLayer.error(EIO, operation.rawValue + " (after crash)", path) }
        operationCount += 1
        if recording { events.append(.init(operation: operation, path: path)) }
        if let limit = haltAfter, operationCount > limit {
            throw SimulatedFileLayer.error(EIO, operation.rawValue + " (halted)", path)
        }
        for i in faults.indices {
            let fault = faults[i]
            guard fault.operations.isEmpty || fault.operations.contains(operation),
                fault.pathContains.map({ path.contains($0) }) ?? true
            else { continue }
            faults[i].seen += 1
            let hit = fault.persistent ? faults[i].seen >= fault.nth : faults[i].seen == fault.nth
            guard hit else { continue }
            let error = SimulatedFileLayer.error(fault.error, operation.rawValue + " (injected)", path)
            if let fraction = fault.tearFraction, operation == .write { return (fraction, error) }
            throw error
        }
        return nil
    }
}

extension SimulatedFileLayer {
    func fileOperation<R>(
        _ operation: Operation, _ path: String, _ body: (inout State) throws -> R
    ) throws -> R {
        try state.withLock { s in
            try s.begin(operation, path)
            return try body(&s)
        }
    }

    func writeOperation(_ node: Int, _ path: String, _ bytes: [UInt8], at offset: Int) throws {
        try state.withLock { s in
            var count = bytes.count
            var failure: TrellisError?
            if let (fraction, error) = try s.check(.write, path) {
                count = Int(Double(bytes.count) * fraction)
                failure = error
            }
            guard var data = s.nodes[node]?.current else { throw Self.error(ENOENT, "pwrite", path) }
            if data.count < offset { data.append(contentsOf: repeatElement(0, count: offset - data.count)) }
            let end = offset + count
            if data.count < end { data.append(contentsOf: repeatElement(0, count: end - data.count)) }
            data.replaceSubrange(offset..<end, with: bytes.prefix(count))
            s.nodes[node]!.current = data
            if let failure { throw failure }
        }
    }
}

/// An open file of a `SimulatedFileLayer`: it names the file's node, so renames do not disturb it, as on POSIX.
final class SimulatedFile: LayerFile {
    let layer: SimulatedFileLayer
    let node: Int
    let path: String
    let writable: Bool

    init(layer: SimulatedFileLayer, node: Int, path: String, writable: Bool) {
        self.layer = layer
        self.node = node
        self.path = path
        self.writable = writable
    }

    func size() throws -> Int {
        try layer.fileOperation(.size, path) { $0.nodes[node]?.current.count ?? 0 }
    }

    func read(at offset: Int, count: Int) throws -> [UInt8] {
        try layer.fileOperation(.read, path) { s in
            s.largestRead = max(s.largestRead, count)
            let data = s.nodes[node]?.current ?? []
            guard offset < data.count else { return [] }
            return Array(data[offset..<min(data.count, offset + count)])
        }
    }

    func write(_ bytes: [UInt8], at offset: Int) throws {
        guard writable else { throw SimulatedFileLayer.error(EBADF, "pwrite", path) }
        try layer.writeOperation(node, path, bytes, at: offset)
    }

    func truncate(to size: Int) throws {
        try layer.fileOperation(.truncate, path) { s in
            guard var data = s.nodes[node]?.current else { return }
            if data.count > size {
                data.removeLast(data.count - size)
            } else {
                data.append(contentsOf: repeatElement(0, count: size - data.count))
            }
            s.nodes[node]!.current = data
        }
    }

    func sync() throws {
        try layer.fileOperation(.sync, path) { s in
            if let data = s.nodes[node]?.current { s.nodes[node]!.synced = data }
        }
    }

    func close() {}
}

/// A lock of a `SimulatedFileLayer`, so that a second store on the same simulated disk is refused as on a real one.
final class SimulatedLock: LayerLock {
    let layer: SimulatedFileLayer
    let path: String
    private let held = Mutex(true)

    init(layer: SimulatedFileLayer, path: String) {
        self.layer = layer
        self.path = path
    }

    func release() {
        let wasHeld = held.withLock { h in
            defer { h = false }
            return h
        }
        if wasHeld { layer.state.withLock { _ = $0.locks.remove(path) } }
    }

    deinit { release() }
}

import Synchronization
import TrellisCore
import TrellisJournal

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open file of a `SimulatedFileLayer`: it names the file's node, so renames do not disturb it, as on POSIX.
package final class SimulatedFile: LayerFile {
    package let layer: SimulatedFileLayer
    package let node: Int
    package let path: String
    package let writable: Bool

    package init(layer: SimulatedFileLayer, node: Int, path: String, writable: Bool) {
        self.layer = layer
        self.node = node
        self.path = path
        self.writable = writable
    }

    package func size() throws -> Int {
        try layer.fileOperation(.size, path) { $0.nodes[node]?.current.count ?? 0 }
    }

    package func read(at offset: Int, count: Int) throws -> [UInt8] {
        try layer.fileOperation(.read, path) { s in
            s.largestRead = max(s.largestRead, count)
            let data = s.nodes[node]?.current ?? []
            guard offset < data.count else { return [] }
            return Array(data[offset..<min(data.count, offset + count)])
        }
    }

    package func write(_ bytes: [UInt8], at offset: Int) throws {
        guard writable else { throw SimulatedFileLayer.error(EBADF, "pwrite", path) }
        try layer.writeOperation(node, path, bytes, at: offset)
    }

    package func truncate(to size: Int) throws {
        try layer.fileOperation(.truncate, path) { s in
            guard var data = s.nodes[node]?.current else { return }
            if data.count > size {
                data.removeLast(data.count - size)
            } else {
                data.append(contentsOf: repeatElement(0, count: size - data.count))
            }
            s.nodes[node]!.current = data
            s.nodes[node]!.cleanNotDurable = s.nodes[node]!.cleanNotDurable.filter { $0.key < size }
        }
    }

    /// Reserves space up to `size` when the layer simulates preallocation (`simulatePreallocation`): the file grows
    /// with zeros, unsynced until the next sync. Not an operation of its own (no fault or halt counts it): like
    /// `posix_fallocate` failing, reserving nothing is never an error.
    package func preallocate(to size: Int) -> Bool {
        layer.state.locked { s in
            guard s.preallocates, !s.dead, writable, var data = s.nodes[node]?.current else { return false }
            if data.count < size { data.append(contentsOf: repeatElement(0, count: size - data.count)) }
            s.nodes[node]!.current = data
            return true
        }
    }

    package func sync() throws {
        layer.passGate(.sync, path)
        let delay = layer.state.locked { $0.syncDelay }
        if delay > 0 { usleep(UInt32(delay * 1_000_000)) }
        try layer.state.locked { s in
            do {
                try s.begin(.sync, path)
            } catch {
                if s.failedSyncCleansPages && !s.dead, let old = s.nodes[node] {
                    // The kernel gave up on the dirty pages and marked them clean: they stay readable, never written.
                    var marked = old.cleanNotDurable
                    for i in old.current.indices where i >= old.synced.count || old.current[i] != old.synced[i] {
                        if marked[i] == nil { marked[i] = i < old.synced.count ? old.synced[i] : 0 }
                    }
                    s.nodes[node]!.cleanNotDurable = marked
                }
                throw error
            }
            guard let old = s.nodes[node] else { return }
            var synced = old.current
            for (i, byte) in old.cleanNotDurable where i < synced.count { synced[i] = byte }
            s.nodes[node]!.synced = synced
        }
    }

    package func close() {}
}

/// A lock of a `SimulatedFileLayer`, so that a second store on the same simulated disk is refused as on a real one.
package final class SimulatedLock: LayerLock {
    package let layer: SimulatedFileLayer
    package let path: String
    private let held = Mutex(true)

    package init(layer: SimulatedFileLayer, path: String) {
        self.layer = layer
        self.path = path
    }

    package func release() {
        let wasHeld = held.locked { h in
            defer { h = false }
            return h
        }
        if wasHeld { layer.state.locked { _ = $0.locks.remove(path) } }
    }

    deinit { release() }
}

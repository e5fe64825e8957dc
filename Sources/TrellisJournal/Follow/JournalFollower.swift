import Foundation
import Synchronization
import TrellisCore
import TrellisGraph

/// Reads a store another process writes, record by record, as far as the writer's durable mark (`DurableMark`) and
/// no further, and publishes each record as a commit of its own, in order, through the store's publish path.
///
/// It takes no lock and writes nothing. Every segment the manifest names is opened as soon as the follower sees it
/// and kept open until read to its end, so a compaction that removes segments (unlink) cannot take records the
/// follower has yet to read; the checkpoint is read only at open. A follower that was not scheduled for a whole
/// compaction (its next segment created and removed before it looked) stops with a failure: it cannot show the
/// commits in between one by one. A migration by the writer stops it too (its schema is no longer the store's).
package final class JournalFollower: Sendable {
    /// A segment opened for reading.
    struct Segment: Sendable {
        var id: UInt64
        var name: String
        var file: any LayerFile
        var salt: UInt64
        var version: UInt16
        /// The sequence number its first record must have.
        var firstSequence: UInt64
        var schema: Schema
        /// Where the next frame is read.
        var offset: Int
    }

    struct State: Sendable {
        var graph: Graph
        var current: Segment?
        /// Later segments, opened before they are read so that a compaction cannot remove them unread.
        var ahead: [UInt64: Segment] = [:]
        var manifestBytes: [UInt8]
        var manifest: Manifest
        var failure: TrellisError?
        /// I/O errors in a row (a file replaced while it was read): retried, up to a limit.
        var ioErrors = 0
    }

    let layer: any FileLayer
    let directory: String
    /// Held for a whole step, publication included, so that commits are published once each and in order.
    let state: Mutex<State>
    let delivery = Mutex(WeakPublisher())
    let watch = Mutex<DirectoryWatch?>(nil)
    let stopped = Atomic<Bool>(false)

    private init(layer: any FileLayer, directory: String, state: State) {
        self.layer = layer
        self.directory = directory
        self.state = Mutex(state)
    }

    /// Opens the store in `directory` for following: the checkpoint the manifest names, then every record through
    /// the durable mark. A compaction that removes a file meanwhile makes it start again.
    package static func open(layer: any FileLayer, directory: String) throws -> JournalFollower {
        var attempt = 0
        while true {
            let before = try? layer.readWhole(joinPath(directory, JournalFormat.manifestName), limit: 4096)
            do {
                return try openOnce(layer: layer, directory: directory)
            } catch let error as TrellisError where error.code == .io || error.code == .corrupt {
                attempt += 1
                let after = try? layer.readWhole(joinPath(directory, JournalFormat.manifestName), limit: 4096)
                guard attempt < 20, before != after else { throw error }
            }
        }
    }

    private static func openOnce(layer: any FileLayer, directory: String) throws -> JournalFollower {
        let manifestBytes = try layer.readWhole(
            joinPath(directory, JournalFormat.manifestName), limit: JournalFormat.maxHeaderBytes)
        let manifest = try Manifest.parse(manifestBytes, file: JournalFormat.manifestName)
        // Every file the manifest names is opened before any is read: a compaction may unlink them from now on.
        var checkpoint: (any LayerFile)?
        if manifest.checkpointSequence > 0 {
            checkpoint = try layer.open(
                joinPath(directory, JournalFormat.checkpointName(manifest.checkpointSequence)), .read)
        }
        defer { checkpoint?.close() }
        var segments: [Segment] = []
        do {
            for id in manifest.firstSegment...manifest.lastSegment {
                segments.append(try openSegment(layer: layer, directory: directory, id: id))
            }
        } catch {
            for segment in segments { segment.file.close() }
            throw error
        }
        var graph: Graph
        do {
            if let checkpoint {
                let name = JournalFormat.checkpointName(manifest.checkpointSequence)
                graph = try Checkpoint.load(
                    checkpoint, name: name, schema: nil, manifestBytes: manifest.checkpointBytes)
            } else {
                graph = Graph(schema: segments[0].schema)
            }
        } catch let problem as JournalProblem {
            for segment in segments { segment.file.close() }
            throw TrellisError(.corrupt, "\(directory)/\(problem)")
        }
        var state = State(
            graph: graph, current: segments.first, manifestBytes: manifestBytes, manifest: manifest)
        for segment in segments.dropFirst() { state.ahead[segment.id] = segment }
        let follower = JournalFollower(layer: layer, directory: directory, state: state)
        do {
            try follower.state.locked { s in
                _ = try follower.advance(&s, initial: true)
                // The newest segment's header holds the current defaults and the migration history.
                if let newest = s.ahead.values.max(by: { $0.id < $1.id }) ?? s.current,
                    newest.schema.fingerprint == s.graph.schema.fingerprint
                {
                    s.graph = s.graph.withSchema(newest.schema)
                }
            }
        } catch {
            follower.close()
            throw error
        }
        return follower
    }

    /// Opens segment `id` and reads its header.
    static func openSegment(layer: any FileLayer, directory: String, id: UInt64) throws -> Segment {
        let name = JournalFormat.segmentName(id)
        let file = try layer.open(joinPath(directory, name), .read)
        do {
            let header = try readSegmentHeader(file, name: name, size: try file.size())
            return Segment(
                id: id, name: name, file: file, salt: header.salt, version: header.version,
                firstSequence: header.sequence, schema: try SchemaCodec.decode(header.schemaBytes, context: name),
                offset: header.encoded().count)
        } catch {
            file.close()
            throw error
        }
    }

    /// The graph the follower holds (the store publishes it at open).
    package var graph: Graph { state.locked { $0.graph } }

    /// Replaces the graph with the same version in the application's schema (same structure: the opener checked).
    package func adopt(_ graph: Graph) {
        state.locked { s in
            precondition(graph.sequence == s.graph.sequence && graph.schema.fingerprint == s.graph.schema.fingerprint)
            s.graph = graph
        }
    }

    /// The sequence number of the checkpoint the manifest names.
    package var checkpointSequence: UInt64 { state.locked { $0.manifest.checkpointSequence } }

    /// The error that stopped following, if one did.
    package var failure: TrellisError? { state.locked { $0.failure } }

    // MARK: Following

    /// Starts the thread that follows: it waits for the writer's mark or manifest to change (inotify on Linux, or
    /// every `interval` seconds without it) and publishes what became durable through `publisher` (held weakly).
    package func start(publisher: any DurablePublisher, notifications: Bool, interval: Double) {
        delivery.locked { $0.target = publisher }
        let watch = DirectoryWatch(
            directory: directory, names: [DurableMark.fileName, JournalFormat.manifestName],
            notifications: notifications)
        self.watch.locked { $0 = watch }
        // Notified changes are acted on at once; without notifications the interval is the delay. With them, a look
        // every second anyway bounds the delay should an event be lost (a queue overflow is reported and acted on).
        let timeout = watch.notifies ? max(interval, 1) : interval
        let thread = Thread { [self] in
            // What became durable between the open and the watch is read first.
            step()
            while watch.wait(timeout: timeout), !stopped.load(ordering: .relaxed) { step() }
            closeFiles()
        }
        thread.name = "Trellis follower"
        thread.start()
    }

    /// Whether the thread follows: started, not stopped, not failed.
    package var isFollowing: Bool {
        watch.locked { $0 != nil } && !stopped.load(ordering: .relaxed) && failure == nil
    }

    /// Reads and publishes what became durable since the last step; returns the sequence number published. Throws the
    /// failure that stopped following. Safe from any thread; steps run one at a time.
    @discardableResult
    package func step() -> UInt64 {
        state.locked { s in
            guard s.failure == nil, !stopped.load(ordering: .relaxed) else { return s.graph.sequence }
            var commits: [Commit] = []
            do {
                commits = try advance(&s, initial: false)
                s.ioErrors = 0
            } catch let error as TrellisError where error.code == .io && s.ioErrors < 100 {
                s.ioErrors += 1
            } catch {
                s.failure =
                    (error as? TrellisError)
                    ?? TrellisError(.failed, "\(directory): following stopped: \(error)")
            }
            if !commits.isEmpty { delivery.locked { $0.target }?.publishDurable(commits) }
            return s.graph.sequence
        }
    }

    /// Stops following; the store keeps the version it shows. The thread closes the files as it ends (or this call,
    /// when none was started). Takes no lock a step holds: a store released by the last reference an observer held
    /// ends here, on the follower's thread, inside a step.
    package func close() {
        stopped.store(true, ordering: .relaxed)
        let started = watch.locked { w -> Bool in
            w?.stop()
            return w != nil
        }
        if !started { closeFiles() }
    }

    private func closeFiles() {
        state.locked { s in
            s.current?.file.close()
            s.current = nil
            for segment in s.ahead.values { segment.file.close() }
            s.ahead = [:]
        }
    }
}

import Foundation
import Synchronization
import TrellisCore
import TrellisGraph

/// Reads a store another process writes, record by record, as far as the writer's durable mark (`DurableMark`) and
/// no further, and publishes each record as a commit of its own, in order, through the store's publish path.
///
/// It takes no lock and writes nothing. Every segment the manifest names is opened as soon as the follower sees it
/// and kept open until read to its end, so a compaction that removes segments (unlink) cannot take records the
/// follower has yet to read. A follower that was not scheduled for a whole compaction (its next segment created and
/// removed before it looked) jumps: it loads the checkpoint the manifest now names, as an open does, reads the
/// records after it through the mark, and publishes the new version as one refresh (`Commit.isRefresh`) whose change
/// set is the difference between the two versions.
///
/// The graph is read in the journal's schema and shown in the application's (`present`, from the store layer). When
/// the two differ in structure (the application's model is a migration of the stored one), every step shows the
/// store migrated in memory, as a refresh, until the writer's own migration to the application's schema arrives;
/// from then on commits are published one by one again. A migration by the writer to any other schema stops it
/// with `.schemaMismatch` naming both fingerprints.
package final class JournalFollower: Sendable {
    /// Shows a graph in the journal's schema in the application's: the graph (same structure: aligned names,
    /// defaults and history), and whether the application's schema is a migration of the graph's.
    package typealias Presenter = @Sendable (Graph) throws -> (graph: Graph, migrated: Bool)

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
        /// The version read, in the journal's schema (the application's, aligned, when the two have one structure).
        var graph: Graph
        /// The version the store shows, in the application's schema.
        var shown: Graph
        /// When `shown` is `graph` migrated in memory (the writer has not migrated to the application's schema): the
        /// journal's schema fingerprint it was migrated from at open.
        var inMemoryFrom: UInt64?
        /// Whether the next publication is a refresh: a jump or a migration read since the last one.
        var refreshDue = false
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
    let present: Presenter
    /// Held for a whole step, publication included, so that commits are published once each and in order.
    let state: Mutex<State>
    let delivery = Mutex(PublisherLink())
    let watch = Mutex<DirectoryWatch?>(nil)
    let stopped = Atomic<Bool>(false)
    /// Steps taken so far (the thread's first one included), for tests that pause a follower.
    let steps = Atomic<Int>(0)
    /// The thread inside a step now, if any: `close()` from that thread (a store released inside its own step)
    /// must not wait for the step.
    let stepping = Mutex<ObjectIdentifier?>(nil)

    private init(layer: any FileLayer, directory: String, present: @escaping Presenter, state: State) {
        self.layer = layer
        self.directory = directory
        self.present = present
        self.state = Mutex(state)
    }

    /// Opens the store in `directory` for following: the checkpoint the manifest names, then every record through
    /// the durable mark, shown through `present`. A compaction that removes a file meanwhile makes it start again.
    package static func open(
        layer: any FileLayer, directory: String, present: @escaping Presenter
    ) throws -> JournalFollower {
        var loaded = try retrying(layer: layer, directory: directory) {
            var state = try load(layer: layer, directory: directory)
            try read(&state, layer: layer, directory: directory)
            return state
        }
        do {
            let shown = try present(loaded.graph)
            loaded.shown = shown.graph
            if shown.migrated {
                loaded.inMemoryFrom = loaded.graph.schema.fingerprint
            } else {
                loaded.graph = shown.graph
            }
        } catch {
            close(loaded)
            throw error
        }
        return JournalFollower(layer: layer, directory: directory, present: present, state: loaded)
    }

    /// Runs `body` again (up to 20 times) while it fails with the manifest changing under it: a compaction removed a
    /// file it was about to read.
    static func retrying<T>(layer: any FileLayer, directory: String, _ body: () throws -> T) throws -> T {
        var attempt = 0
        while true {
            let before = try? layer.readWhole(joinPath(directory, JournalFormat.manifestName), limit: 4096)
            do {
                return try body()
            } catch let error as TrellisError where error.code == .io || error.code == .corrupt {
                attempt += 1
                let after = try? layer.readWhole(joinPath(directory, JournalFormat.manifestName), limit: 4096)
                guard attempt < 20, before != after else { throw error }
            }
        }
    }

    /// Reads `state` through the durable mark, applying records in place (nothing is published), and gives the
    /// graph the newest segment's schema (current defaults and the migration history). When it throws, the files
    /// the state held, and any it opened, are closed.
    static func read(_ state: inout State, layer: any FileLayer, directory: String) throws {
        let reader = JournalFollower(layer: layer, directory: directory, present: { ($0, false) }, state: state)
        state = try reader.state.locked { s in
            do {
                _ = try reader.advance(&s, initial: true)
            } catch {
                close(s)
                throw error
            }
            if let newest = s.ahead.values.max(by: { $0.id < $1.id }) ?? s.current,
                newest.schema.fingerprint == s.graph.schema.fingerprint
            {
                s.graph = s.graph.withSchema(newest.schema)
            }
            s.shown = s.graph
            return s
        }
    }

    /// Closes the files a state holds.
    static func close(_ state: State) {
        state.current?.file.close()
        for segment in state.ahead.values { segment.file.close() }
    }

    /// The checkpoint the manifest names and the segments after it, opened (nothing read past their headers).
    static func load(layer: any FileLayer, directory: String) throws -> State {
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
            graph: graph, shown: graph, current: segments.first, manifestBytes: manifestBytes, manifest: manifest)
        for segment in segments.dropFirst() { state.ahead[segment.id] = segment }
        return state
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

    /// The version the follower shows, in the application's schema (the store publishes it at open).
    package var graph: Graph { state.locked { $0.shown } }

    /// Whether the follower shows the store migrated in memory to the application's schema (the writer has not
    /// migrated it yet).
    package var isMigratedInMemory: Bool { state.locked { $0.inMemoryFrom != nil } }

    /// The sequence number of the checkpoint the manifest names.
    package var checkpointSequence: UInt64 { state.locked { $0.manifest.checkpointSequence } }

    /// The error that stopped following, if one did.
    package var failure: TrellisError? { state.locked { $0.failure } }

    // MARK: Following

    /// Starts the thread that follows: it waits for the writer's mark or manifest to change (inotify on Linux, or
    /// every `interval` seconds without it) and publishes what became durable through `publisher` (held until `close()`).
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

    /// The number of steps taken (reads of what became durable), the thread's first one included.
    package var stepsTaken: Int { steps.load(ordering: .relaxed) }

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
            stepping.locked { $0 = ObjectIdentifier(Thread.current) }
            defer { stepping.locked { $0 = nil } }
            var commits: [Commit] = []
            do {
                commits = try advance(&s, initial: false)
                if s.refreshDue || (s.inMemoryFrom != nil && s.graph.sequence > s.shown.sequence) {
                    commits = [try refresh(&s)]
                } else if let last = commits.last {
                    s.shown = last.snapshot
                }
                s.ioErrors = 0
            } catch let error as TrellisError where error.code == .io && s.ioErrors < 100 {
                s.ioErrors += 1
                // Records applied before the error were not published: the next step shows them as a refresh.
                if s.graph.sequence > s.shown.sequence { s.refreshDue = true }
            } catch {
                s.failure =
                    (error as? TrellisError)
                    ?? TrellisError(.failed, "\(directory): following stopped: \(error)")
            }
            if !commits.isEmpty { delivery.locked { $0.target }?.publishDurable(commits) }
            steps.add(1, ordering: .relaxed)
            return s.shown.sequence
        }
    }

    /// Shows the version read as one commit: the difference from the version shown (`Commit.isRefresh`). The
    /// application's schema must be the journal's, or (while the writer has not migrated since the open) a migration
    /// of it.
    private func refresh(_ s: inout State) throws -> Commit {
        s.refreshDue = false
        let mismatch = TrellisError(
            .schemaMismatch,
            "\(directory): the writer migrated the store to schema \(Self.hex(s.graph.schema.fingerprint)) (record "
                + "\(s.graph.sequence)); this follower's model is schema \(Self.hex(s.shown.schema.fingerprint)), so "
                + "following stopped at record \(s.shown.sequence) (open the store again with the model the writer uses)"
        )
        let presented: (graph: Graph, migrated: Bool)
        do {
            presented = try present(s.graph)
        } catch {
            throw mismatch
        }
        if presented.migrated {
            // In memory only from the schema the store held at open: the writer's migration must be to this model.
            guard s.inMemoryFrom == s.graph.schema.fingerprint else { throw mismatch }
        } else {
            s.graph = presented.graph
            s.inMemoryFrom = nil
        }
        var next = presented.graph
        next.sequence = s.graph.sequence
        let commit = Commit(
            sequence: next.sequence, changes: next.changes(from: s.shown), snapshot: next,
            refreshingFrom: s.shown.sequence)
        s.shown = next
        return commit
    }

    /// A schema fingerprint as the tool prints it.
    static func hex(_ fingerprint: UInt64) -> String {
        let digits = String(fingerprint, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }

    /// Stops following; the store keeps the version it shows. The thread closes the files as it ends (or this call,
    /// when none was started). A step in progress on another thread is waited for, so nothing is published once this
    /// returns. Inside a step (a store released by the last reference an observer held, on the follower's thread)
    /// it takes no lock the step holds; the store's publisher delivers none of that step's remaining commits (the
    /// store has closed), and no step follows it.
    package func close() {
        stopped.store(true, ordering: .relaxed)
        let started = watch.locked { w -> Bool in
            w?.stop()
            return w != nil
        }
        let insideStep = stepping.locked { $0 == ObjectIdentifier(Thread.current) }
        // A step that began before `stopped` was set ends before the lock is free; later ones publish nothing.
        if !insideStep { state.locked { _ in } }
        if !started { closeFiles() }
        delivery.locked { $0.target = nil }
    }

    private func closeFiles() {
        state.locked { s in
            Self.close(s)
            s.current = nil
            s.ahead = [:]
        }
    }
}

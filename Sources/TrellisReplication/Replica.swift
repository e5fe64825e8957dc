import Dispatch
import Foundation
import Synchronization
import TrellisCore
import TrellisJournal
import TrellisNATS
import TrellisStore

/// A replica made the writer (`Replica.promote`): its store, now writable, and the publisher that extends the stream
/// with its commits.
public struct Promotion: Sendable {
    /// The replica's store, open for writing: commit to it as to any store, and close it when done.
    public let store: Store
    /// The publisher of `store` on the replica's stream, started. Its `failure` turns `fenced` if another writer
    /// extended the stream first (the old writer was still alive): then nothing this store commits is published.
    public let publisher: ReplicationPublisher
}

/// How far a replica is behind its stream.
public struct ReplicaLag: Sendable, Equatable {
    /// Records the stream holds that the replica has not applied (as of its last fetch).
    public var records: UInt64
    /// How long ago the oldest of them was published (zero when none is pending).
    public var time: Duration
}

/// A read-only copy of a store in another process or on another machine, fed by the stream a
/// `ReplicationPublisher` fills (`replication-format.md`).
///
/// A new replica starts from the newest checkpoint the publisher put on the server, if any. The replica keeps a store
/// of its own in `directory`: each record of the stream is checked as recovery checks a
/// frame, decoded, applied and written to the local journal under the writer's sequence number, so a restart resumes
/// after the last record applied (no gap, no duplicate). `store` serves it read-only (every read API, the view
/// context, live results, history) and moves as records are applied.
///
/// The replica has no model of its own: it takes the writer's schema, and follows the writer through a migration
/// (the migration record is applied and committed to the local journal as the writer committed it). After one,
/// `store` is a new follower store in the new schema (the previous one is closed): read `store` again, and bind models
/// of the new schema to it.
///
/// When the writer is gone, `promote()` makes the replica the writer: once it has applied the stream's last record, its
/// store becomes writable and a publisher extends the same stream, fenced against a writer that still lives.
///
/// ```swift
/// let replica = try Replica(url: "nats://127.0.0.1:4222", name: "orders", directory: replicaURL)
/// replica.start()
/// let view = replica.store.viewContext   // read-only, follows the writer
/// print(replica.replicaLag.records)
/// ```
public final class Replica: Sendable {
    /// The local directory of the replica's store.
    public let directory: URL
    /// The replicated store's name on the server.
    public let name: String
    /// The server's address.
    public let options: NATSOptions
    /// The server's URL, as given.
    public let url: String
    /// The replica's store, read-only: it shows every record applied and made durable locally. A migration by the
    /// writer replaces it with one in the new schema (the previous one is closed).
    public var store: Store { stores.locked { $0.reader } }
    /// The writable store the records are applied to (nobody else commits to it).
    var local: Store { stores.locked { $0.local } }

    struct Stores: Sendable {
        var local: Store
        var reader: Store
        /// Set by a promotion: the local store is the promoted writer's, no longer the replica's to close.
        var promoted = false
    }

    let stores: Mutex<Stores>

    struct State: Sendable {
        /// The last record the stream held at the last fetch: the last one applied by then plus the server's count of
        /// records after it.
        var streamLast: UInt64 = 0
        var oldestPending: Int64 = 0
        var failure: ReplicationError?
        var lastError: String?
    }

    let state = Mutex(State())
    let stopped = Atomic<Bool>(false)
    let running = Atomic<Bool>(false)
    let finished = DispatchSemaphore(value: 0)

    var streamName: String { "TRELLIS_" + name }
    var subject: String { "trellis.\(name).rec" }

    /// Opens (or creates) the replica of stream `name` on the server at `url` in `directory`. A new replica reads the
    /// store's schema from the server (the publisher puts it there), so the server must be reachable and the
    /// publisher must have started once; an existing replica opens without the server. A server that cannot be
    /// reached or does not answer in time throws `ReplicationError` `.unreachable`, one with no schema for `name`
    /// `.notPublished`; neither creates anything, and both may be retried.
    public init(url: String, name: String, directory: URL) throws {
        self.directory = directory
        self.name = name
        self.url = url
        var options = try NATSOptions(url: url)
        options.name = "trellis-replica-\(name)"
        options.maxReconnectAttempts = 0
        self.options = options
        let schema: Schema
        if FileManager.default.fileExists(atPath: directory.appendingPathComponent("MANIFEST").path) {
            schema = try JournalReader(directory: directory).schema()
        } else {
            let fetched: (schema: Schema, checkpointSchema: Schema?)
            do {
                fetched = try Self.fetchSchema(options, url: url, name: name, directory: directory)
            } catch let error as NATSError where Self.transient.contains(error.code) {
                throw ReplicationError(.unreachable, "\(error)")
            }
            // From a checkpoint, the checkpoint's own schema (a migration may have come after it).
            if let checkpointSchema = fetched.checkpointSchema {
                // Opening loads and checks the checkpoint (the bootstrap read only its header); a checkpoint that
                // fails leaves no store, so the next start bootstraps anew.
                do {
                    stores = Mutex(try Self.open(directory: directory, schema: checkpointSchema))
                } catch {
                    try? FileManager.default.removeItem(at: directory.appendingPathComponent("MANIFEST"))
                    throw error
                }
                return
            }
            schema = fetched.schema
        }
        stores = Mutex(try Self.open(directory: directory, schema: schema))
    }

    /// The failures to reach the server that a later attempt may not meet: `init` reports them as `.unreachable`.
    static let transient: Set<NATSError.Code> = [
        .connectionFailed, .notConnected, .connectionLost, .timeout, .noResponders,
        // The connection gave up after losing the server (it does not reconnect); only `fetchSchema`'s `defer`
        // closes it on purpose, after its last request.
        .closed,
    ]

    /// The stream's schema from the server and, when the server holds a checkpoint, the store bootstrapped from it
    /// in `directory` and the checkpoint's schema. Local files are written only after every read from the server.
    private static func fetchSchema(
        _ options: NATSOptions, url: String, name: String, directory: URL
    ) throws -> (schema: Schema, checkpointSchema: Schema?) {
        let connection = try NATSConnection(options)
        defer { connection.close() }
        let bytes: [UInt8]
        do {
            bytes = try ObjectStore(JetStream(connection), bucket: "trellis-\(name)").get("schema")
        } catch let error as NATSError where error.code == .objectNotFound {
            throw ReplicationError(
                .notPublished, "the server has no schema for \(name): start its publisher first (\(error.message))")
        }
        let current = try SchemaCodec.decode(bytes, context: "the stream's schema object")
        return (current, try bootstrap(connection, name: name, directory: directory))
    }

    /// The writable store records are applied to and the follower that serves it.
    private static func open(directory: URL, schema: Schema) throws -> Stores {
        let local = try Store(directory: directory, schema: schema)
        do {
            return Stores(local: local, reader: try Store(directory: directory, schema: schema, options: .follower))
        } catch {
            try? local.close()
            throw error
        }
    }

    /// What `latest` in the bucket says (replication-format.md, "Checkpoints").
    struct Latest: Decodable {
        var sequence: UInt64
        var object: String
    }

    /// Makes the new replica's store from the newest checkpoint in the bucket, when there is one; the records after
    /// it come from the stream. Returns the checkpoint's schema, or nil without a checkpoint.
    private static func bootstrap(_ connection: NATSConnection, name: String, directory: URL) throws -> Schema? {
        let bucket = try ObjectStore(JetStream(connection), bucket: "trellis-\(name)")
        var attempt = 0
        while true {
            let latest: Latest
            do {
                latest = try JSONDecoder().decode(Latest.self, from: Data(try bucket.get("latest")))
            } catch let error as NATSError where error.code == .objectNotFound {
                return nil
            }
            let bytes: [UInt8]
            do {
                bytes = try bucket.get(latest.object)
            } catch let error as NATSError where error.code == .objectNotFound && attempt < 3 {
                // A newer checkpoint replaced it meanwhile (the publisher deletes the one `latest` named before).
                attempt += 1
                continue
            }
            return try ReplicaBootstrap.createStore(
                directory: directory.path, checkpoint: bytes, sequence: latest.sequence)
        }
    }

    /// The sequence number of the last record applied (durable locally).
    public var appliedSequence: UInt64 { local.snapshot.sequence }

    /// How far the replica is behind the stream, as of its last fetch.
    public var replicaLag: ReplicaLag {
        // Against the applied sequence read now: the store shows a batch before the state learns the batch's end,
        // so a count kept from the fetch alone could still hold records applied since.
        let applied = appliedSequence
        return state.locked { s in
            guard s.streamLast > applied else { return ReplicaLag(records: 0, time: .zero) }
            let now = Int64(Date().timeIntervalSince1970 * 1e9)
            return ReplicaLag(records: s.streamLast - applied, time: .nanoseconds(max(0, now - s.oldestPending)))
        }
    }

    /// The error that stopped the replica (a gap in the stream, a damaged record, a migration), if one did.
    public var failure: ReplicationError? { state.locked { $0.failure } }

    /// The last error met and retried (the server unreachable, say); nil after a fetch that succeeded.
    public var lastError: String? { state.locked { $0.lastError } }

    /// Starts the thread that fetches and applies the stream's records, reconnecting while the server is away.
    public func start() {
        guard !running.exchange(true, ordering: .relaxed) else { return }
        let thread = Thread { [self] in
            var pause = 0.05
            while !stopped.load(ordering: .relaxed), failure == nil {
                do {
                    try follow()
                } catch let error as ReplicationError {
                    state.locked { if $0.failure == nil { $0.failure = error } }
                } catch {
                    state.locked { $0.lastError = "\(error)" }
                    Thread.sleep(forTimeInterval: pause)
                    pause = min(pause * 2, 2)
                }
            }
            finished.signal()
        }
        thread.name = "Trellis replica \(name)"
        thread.start()
    }

    /// One connection's life: a consumer from the record after the last applied, then fetch and apply until the
    /// connection fails or the replica stops.
    private func follow() throws {
        let connection = try NATSConnection(options)
        defer { connection.close() }
        let js = JetStream(connection)
        // Record n is the stream's message n (the publisher starts the stream at record 1 and the server stores each
        // record once); every message's id is checked all the same.
        var config = ConsumerConfig(
            deliverPolicy: .byStartSequence(appliedSequence + 1), ackPolicy: .all, filterSubject: subject)
        config.inactiveThreshold = .seconds(30)
        let consumer = try js.createConsumer(stream: streamName, config: config)
        defer { try? js.deleteConsumer(stream: streamName, consumer: consumer.name) }
        // Caught up, the replica waits for the next record with a fetch of one, which returns as it arrives; then it
        // takes whatever has come since without waiting (no-wait fetches return at once), until one finds nothing.
        var waiting = true
        while !stopped.load(ordering: .relaxed) {
            let messages =
                waiting
                ? try js.fetch(stream: streamName, consumer: consumer.name, batch: 1, timeout: .milliseconds(500))
                : try js.fetch(stream: streamName, consumer: consumer.name, batch: 256, noWait: true)
            waiting = messages.isEmpty
            // The records are applied without waiting for each one's sync; one flush makes the batch durable before
            // it is acknowledged.
            var due = appliedSequence + 1
            do {
                for message in messages {
                    if try apply(message, due: due, js) { due += 1 }
                }
            } catch {
                try? local.flush()  // What was applied is durable before the loop starts again from it.
                throw error
            }
            if !messages.isEmpty { try local.flush() }
            // One acknowledgement covers the batch (pull consumers need an ack policy; the server's ack floor is how
            // far this replica has applied).
            if let last = messages.last { try js.ack(last) }
            state.locked { s in
                s.lastError = nil
                if let last = messages.last {
                    let lastRecord = last.message.headers?["Nats-Msg-Id"].flatMap { UInt64($0) } ?? (due - 1)
                    s.streamLast = lastRecord + last.pending
                    s.oldestPending = last.timestamp
                } else {
                    s.streamLast = due - 1
                }
            }
        }
    }

    /// Applies `message` if it holds record `due` (the one after the last applied, durable or not); returns false for
    /// a record applied already.
    private func apply(_ message: JetStreamMessage, due: UInt64, _ js: JetStream) throws -> Bool {
        let headers = message.message.headers
        guard let id = headers?["Nats-Msg-Id"].flatMap({ UInt64($0) }) else {
            throw ReplicationError(
                .failed, "stream \(streamName) message \(message.streamSequence) has no record number")
        }
        if id < due { return false }  // Applied already.
        guard id == due else {
            throw ReplicationError(
                .failed,
                "stream \(streamName) skips from record \(due - 1) to \(id): a gap (the stream dropped records a "
                    + "checkpoint covers while this replica was behind), so the replica stops; start a new replica "
                    + "(an empty directory) to begin from the checkpoint")
        }
        guard let version = headers?["Trellis-Format"].flatMap({ UInt16($0) }),
            let salt = headers?["Trellis-Salt"].flatMap({ UInt64($0, radix: 16) })
        else {
            throw ReplicationError(.failed, "stream \(streamName) record \(id) lacks its format or salt header")
        }
        let context = "\(streamName) record \(id)"
        let bytes = try recordBytes(message, id: id, js)
        do {
            let frame = try DurableFrame(received: bytes, version: version, salt: salt, context: context)
            guard frame.sequence == id else {
                throw TrellisError(.corrupt, "\(context): the frame holds record \(frame.sequence)")
            }
            if frame.isMigration {
                try local.flush()
                try migrate(frame, context: context)
                return true
            }
            let (changes, author) = try frame.changeSet(schema: local.schema, context: context)
            try local.applyReplicated(changes, sequence: id, author: author, waitDurable: false)
            return true
        } catch let error as TrellisError where error.code != .io {
            throw ReplicationError(.failed, "\(error)")
        }
    }

    /// Applies the writer's migration as the writer committed it: both stores close, the migration is committed to the
    /// local journal (a new segment in the new schema, then the manifest), and both open again in the new schema.
    private func migrate(_ frame: DurableFrame, context: String) throws {
        let (local, reader) = stores.locked { ($0.local, $0.reader) }
        try reader.close()
        try local.close()
        let schema = try Store.commitReplicatedMigration(directory: directory, frame: frame, context: context)
        let opened = try Self.open(directory: directory, schema: schema)
        stores.locked {
            $0.local = opened.local
            $0.reader = opened.reader
        }
    }

    /// The record's frame bytes: the message's payload, or, for a record over `max_payload`, the object its
    /// `Trellis-Object` header names, with the digest its `Trellis-Digest` header gives (replication-format.md).
    private func recordBytes(_ message: JetStreamMessage, id: UInt64, _ js: JetStream) throws -> [UInt8] {
        let headers = message.message.headers
        guard let object = headers?["Trellis-Object"] else { return message.message.payload }
        guard object == "rec-\(id)", message.message.payload.isEmpty, let digest = headers?["Trellis-Digest"] else {
            throw ReplicationError(
                .failed,
                "stream \(streamName) record \(id) names object \(object) without its digest or with a payload")
        }
        let bucket = try ObjectStore(js, bucket: "trellis-\(name)")
        do {
            // Another writer's object of this name would differ from the digest the fenced message carries.
            guard try bucket.info(object).digest == digest else {
                throw ReplicationError(
                    .failed, "object \(object) of bucket trellis-\(name) is not the one record \(id) was published with"
                )
            }
            return try bucket.get(object)
        } catch let error as NATSError where error.code == .objectNotFound || error.code == .objectCorrupt {
            throw ReplicationError(.failed, "stream \(streamName) record \(id): \(error)")
        }
    }

    /// Stops applying and closes both stores; waits (up to `timeout`) for the thread to end. True when it ended.
    @discardableResult
    public func stop(timeout: Duration = .seconds(10)) -> Bool {
        stopped.store(true, ordering: .relaxed)
        var ended = true
        // A promotion already waited for the thread to end.
        if running.load(ordering: .relaxed), !stores.locked({ $0.promoted }) {
            ended = finished.wait(timeout: .now() + .milliseconds(Int(timeout.components.seconds * 1000))) == .success
        }
        let (local, reader, promoted) = stores.locked { ($0.local, $0.reader, $0.promoted) }
        try? reader.close()
        if !promoted { try? local.close() }
        return ended
    }

    /// Makes the replica the writer, when it has applied the stream's last record: the fetch thread stops, `store`
    /// closes, and the local store (writable) is handed over with a started `ReplicationPublisher` that extends the
    /// same stream after that record. Use it once the old writer is gone, as Litestream's restore-then-write or a
    /// database failover: stop (or lose) the writer, let the replica catch up, promote.
    ///
    /// ```swift
    /// guard replica.waitUntilApplied(lastRecord, timeout: .seconds(30)) else { … }
    /// let promotion = try replica.promote()
    /// try promotion.store.write { tx in … }          // published to the stream for the other replicas
    /// ```
    ///
    /// Throws `notCaughtUp` (the replica keeps following) when the stream holds a record it has not applied, and the
    /// replica's `failure` when it stopped. Nothing forks if the old writer still lives: both publish each record with
    /// the stream sequence of the last one they know (`Nats-Expected-Last-Subject-Sequence`), so whichever publishes
    /// first extends the stream and the other is refused (its publisher's `failure` is `fenced`, and it publishes
    /// nothing more). A promotion that finds the stream moved past its record before it publishes is fenced the same
    /// way. After a promotion the replica is spent: `stop()` closes nothing the promotion handed over.
    public func promote(historyConsumer: String? = nil, trimStream: Bool = true) throws -> Promotion {
        let wasRunning = running.load(ordering: .relaxed)
        stopped.store(true, ordering: .relaxed)
        if wasRunning {
            guard finished.wait(timeout: .now() + .seconds(30)) == .success else {
                throw ReplicationError(.failed, "the replica's thread did not stop within 30 s; not promoted")
            }
        }
        // Refused: the replica follows again as it did.
        func resume() {
            stopped.store(false, ordering: .relaxed)
            running.store(false, ordering: .relaxed)
            if wasRunning { start() }
        }
        if let failure {
            throw failure
        }
        let last: UInt64
        let streamSequence: UInt64
        do {
            let connection = try NATSConnection(options)
            defer { connection.close() }
            do {
                let message = try JetStream(connection).lastMessage(stream: streamName, subject: subject)
                guard let id = message.headers?["Nats-Msg-Id"].flatMap({ UInt64($0) }) else {
                    throw ReplicationError(.failed, "the last message of stream \(streamName) has no record number")
                }
                (last, streamSequence) = (id, message.sequence)
            } catch let error as NATSError where error.code == .messageNotFound {
                (last, streamSequence) = (0, 0)
            }
        } catch {
            resume()
            throw error
        }
        let applied = appliedSequence
        guard applied == last else {
            resume()
            if applied < last {
                throw ReplicationError(
                    .notCaughtUp,
                    "the replica applied record \(applied) and stream \(streamName) holds \(last): not promoted; let it "
                        + "catch up and promote again")
            }
            throw ReplicationError(
                .failed, "the replica applied record \(applied), past the stream's last \(last): not promoted")
        }
        // Reopened for writing: the store that applied the records never allocated an object ID, and a writer's
        // allocator starts after the highest one the store holds.
        let (applier, reader) = stores.locked { s -> (Store, Store) in
            s.promoted = true
            return (s.local, s.reader)
        }
        try? reader.close()
        try applier.close()
        let local = try Store(directory: directory, schema: applier.schema)
        let publisher = try ReplicationPublisher(
            store: local, url: url, name: name, historyConsumer: historyConsumer, trimStream: trimStream,
            promotedAt: (last, streamSequence))
        publisher.start()
        return Promotion(store: local, publisher: publisher)
    }

    /// Waits until the replica has applied record `sequence` and its `store` shows it (or the replica failed).
    public func waitUntilApplied(_ sequence: UInt64, timeout: Duration) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if appliedSequence >= sequence, (try? store.catchUp()) ?? 0 >= sequence { return true }
            if failure != nil { return false }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return false
    }
}

import Dispatch
import Foundation
import Synchronization
import TrellisCore
import TrellisJournal
import TrellisNATS
import TrellisStore

/// Publishes a writable store's durable records, in order, to a NATS JetStream stream (`replication-format.md`,
/// "The record stream"), for replicas to apply.
///
/// It reads the store's journal as far as the durable mark, never the commit path: a commit never waits for the
/// network, and while the server is unreachable the store keeps committing and the publisher catches up from the
/// journal when it returns. Each message carries the record's sequence number as its deduplication id and the stream
/// sequence of the previous record's message as the expected last subject sequence, so a second writer on the same
/// stream is refused (`ReplicationError.Code.fenced`) and stops, rather than forking the stream.
///
/// ```swift
/// let publisher = try ReplicationPublisher(store: store, url: "nats://127.0.0.1:4222", name: "orders")
/// publisher.start()
/// // … commits …
/// publisher.stop()
/// ```
///
/// Keep the records until they are published: a compaction removes records the checkpoint covers, and a record the
/// publisher has not sent by then cannot be sent (`historyCompacted`); publish before compacting.
public final class ReplicationPublisher: Sendable {
    /// The store's directory.
    public let directory: URL
    /// The name of the replicated store on the server: the stream is `TRELLIS_<name>`, its subject
    /// `trellis.<name>.rec`.
    public let name: String
    /// The server's address.
    public let options: NATSOptions
    /// The store's schema, put on the server for replicas that start from nothing.
    let schema: Schema
    /// The store published.
    let store: Store
    /// The history consumer the publisher acknowledges as, if any.
    public let historyConsumer: String?
    /// Whether the stream drops the records a checkpoint on the server covers.
    public let trimStream: Bool
    /// A promoted replica's starting point: the stream's last record when it was promoted and that message's stream
    /// sequence. The replica applied that record under its own salt, so its bytes differ from the stream's; the
    /// resume check trusts the stream's record there instead of comparing bytes (every later record is its own).
    let promotedAt: (record: UInt64, streamSequence: UInt64)?

    struct State: Sendable {
        var connection: NATSConnection?
        /// The last record the stream holds for this store, and its message's stream sequence.
        var published: UInt64 = 0
        var streamSequence: UInt64 = 0
        var resumed = false
        /// The newest checkpoint put in the bucket by this publisher.
        var checkpoint: UInt64 = 0
        /// The records this publisher put as `rec-<n>` objects and has not deleted yet.
        var largeRecords: [UInt64] = []
        var failure: ReplicationError?
        var lastError: String?
    }

    let state = Mutex(State())
    /// Held by a publishing step, so that steps run one at a time and in order.
    let stepping = Mutex(StepState())
    let stopped = Atomic<Bool>(false)
    let running = Atomic<Bool>(false)
    let wake = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    let observation = Mutex<ObservationToken?>(nil)

    struct StepState: @unchecked Sendable {
        // Used only under the `stepping` lock.
        var reader: DurableFrameReader?
    }

    /// The stream's name.
    public var streamName: String { "TRELLIS_" + name }
    /// The subject records are published on.
    public var subject: String { "trellis.\(name).rec" }

    /// A publisher of `store` (a writable store with a directory) to the server at `url`, under `name` (letters,
    /// digits, `-` and `_`). Nothing is sent before `start()` (or `publishPending()`).
    ///
    /// With `historyConsumer`, the publisher acknowledges what the stream holds as that history consumer
    /// (`Store.acknowledgeHistory`): open the store with `StoreOptions.history` naming it
    /// (`HistoryRetention(consumers: ["replication"])`) and compaction keeps every record not yet published, so the
    /// publisher catches up after any outage. Without it, a compaction can remove records it has not sent.
    ///
    /// With `trimStream` (the default), once a checkpoint is on the server the stream drops the records before it
    /// (the checkpoint's own record stays, for the publisher to resume after): a new replica starts from the
    /// checkpoint, and one that fell behind it stops and must start again.
    public convenience init(
        store: Store, url: String, name: String, historyConsumer: String? = nil, trimStream: Bool = true
    ) throws {
        try self.init(
            store: store, url: url, name: name, historyConsumer: historyConsumer, trimStream: trimStream,
            promotedAt: nil)
    }

    init(
        store: Store, url: String, name: String, historyConsumer: String?, trimStream: Bool,
        promotedAt: (record: UInt64, streamSequence: UInt64)?
    ) throws {
        guard let directory = store.directory, !store.isReadOnly else {
            throw ReplicationError(.invalidArgument, "only a writable store with a directory can be published")
        }
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else {
            throw ReplicationError(.invalidArgument, "a replicated store's name is letters, digits, - and _: \(name)")
        }
        self.directory = directory
        self.name = name
        self.schema = store.schema
        self.store = store
        self.historyConsumer = historyConsumer
        self.trimStream = trimStream
        self.promotedAt = promotedAt
        var options = try NATSOptions(url: url)
        options.name = "trellis-publisher-\(name)"
        self.options = options
        // A commit wakes the publisher (one semaphore signal on the commit's publication, never a wait).
        let wake = self.wake
        observation.locked { $0 = store.observe { _ in wake.signal() } }
    }

    deinit {
        observation.locked { $0?.cancel() }
    }

    /// The sequence number of the last record the stream holds (acknowledged by the server).
    public var publishedSequence: UInt64 { state.locked { $0.published } }

    /// The error that stopped publishing (`fenced`: another writer extends the stream), if one did.
    public var failure: ReplicationError? { state.locked { $0.failure } }

    /// The last error publishing met and will retry (the server unreachable, say); nil after a step that succeeded.
    public var lastError: String? { state.locked { $0.lastError } }

    /// Starts the thread that publishes: it connects (retrying while the server is unreachable), resumes after the
    /// stream's last record, then publishes each record as it becomes durable.
    public func start() {
        guard !running.exchange(true, ordering: .relaxed) else { return }
        let thread = Thread { [self] in
            var pause = 0.05
            while !stopped.load(ordering: .relaxed), failure == nil {
                do {
                    let sent = try publishPending()
                    state.locked { $0.lastError = nil }
                    pause = 0.05
                    // A full batch means more is waiting; otherwise wait for a commit (or look again in a while).
                    if sent < Self.batch { _ = wake.wait(timeout: .now() + .milliseconds(250)) }
                } catch let error as ReplicationError where error.code == .fenced || error.code == .failed {
                    break
                } catch {
                    state.locked { $0.lastError = "\(error)" }
                    _ = wake.wait(timeout: .now() + pause)
                    pause = min(pause * 2, 2)
                }
            }
            disconnect()
            finished.signal()
        }
        thread.name = "Trellis publisher \(name)"
        thread.start()
    }

    /// Stops publishing and waits (up to `timeout`) for the thread to end; true when it ended.
    @discardableResult
    public func stop(timeout: Duration = .seconds(10)) -> Bool {
        stopped.store(true, ordering: .relaxed)
        wake.signal()
        guard running.load(ordering: .relaxed) else {
            disconnect()
            return true
        }
        let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        return finished.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .success
    }

    /// Waits until the stream holds record `sequence` (or publishing stopped); true when it does.
    public func waitUntilPublished(_ sequence: UInt64, timeout: Duration) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if publishedSequence >= sequence { return true }
            if failure != nil { return false }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return publishedSequence >= sequence
    }

    static let batch = 256

    // MARK: Steps

    /// Connects if needed, resumes after the stream's last record if not done on this connection, and publishes the
    /// durable records after it (at most one batch); returns how many it sent. Throws the error that stopped it:
    /// `fenced` (and every later call throws it too) or a connection error to retry.
    @discardableResult
    package func publishPending() throws -> Int {
        try stepping.locked { step in
            if let failure = failure { throw failure }
            let connection = try connect()
            let js = JetStream(connection)
            if !state.locked({ $0.resumed }) {
                try resume(js, &step)
            }
            guard let reader = step.reader else { return 0 }
            let frames: [DurableFrame]
            do {
                frames = try reader.next(limit: Self.batch)
            } catch let error as TrellisError {
                throw fail(.failed, "reading the journal to publish: \(error)")
            }
            for frame in frames {
                try publish(frame, js)
            }
            if let historyConsumer, let last = frames.last {
                // Compaction may now drop what the stream holds. A failure here is retried with the next batch.
                try store.acknowledgeHistory(
                    consumer: historyConsumer, token: HistoryToken(sequence: last.sequence, storeID: nil))
            }
            try putCheckpoint(js)
            return frames.count
        }
    }

    /// Puts the store's checkpoint in the bucket once the stream holds the record it was made at: object
    /// `checkpoint-<sequence in 16 hex digits>`, then object `latest` naming it (replication-format.md, "Checkpoints").
    private func putCheckpoint(_ js: JetStream) throws {
        let (published, done) = state.locked { ($0.published, $0.checkpoint) }
        guard let (sequence, bytes) = try ReplicaBootstrap.checkpoint(directory: directory.path, after: done),
            sequence <= published
        else { return }
        let bucket = try ObjectStore(js, bucket: "trellis-\(name)")
        let object = "checkpoint-" + Self.hex16(sequence)
        // The checkpoint `latest` names now, whoever put it: replaced, it goes once `latest` names the new one.
        let previous: String?
        do {
            previous = try JSONDecoder().decode(Replica.Latest.self, from: Data(try bucket.get("latest"))).object
        } catch let error as NATSError where error.code == .objectNotFound {
            previous = nil
        } catch is DecodingError {
            previous = nil
        }
        _ = try bucket.put(object, data: bytes)
        let latest = "{\"sequence\":\(sequence),\"object\":\"\(object)\",\"streamSequence\":\(sequence)}"
        _ = try bucket.put("latest", data: Array(latest.utf8))
        state.locked { $0.checkpoint = sequence }
        if let previous, previous != object { try bucket.delete(previous) }
        guard trimStream else { return }
        // Record n is stream message n: the records before the checkpoint's go, its own stays; so do the objects of
        // the large records among them (record c's own stays with its message).
        try js.purgeStream(streamName, before: sequence)
        let covered = state.locked { $0.largeRecords.filter { $0 < sequence } }
        for record in covered {
            try bucket.delete("rec-\(record)")
            state.locked { $0.largeRecords.removeAll { $0 == record } }
        }
    }

    /// The sequence number of the newest checkpoint this publisher put on the server (0: none).
    public var checkpointSequence: UInt64 { state.locked { $0.checkpoint } }

    /// Sends one record, fenced by the previous record's stream sequence.
    private func publish(_ frame: DurableFrame, _ js: JetStream) throws {
        let expected = state.locked { $0.streamSequence }
        var options = PublishOptions(messageID: String(frame.sequence), expectedLastSubjectSequence: expected)
        options.headers["Trellis-Format"] = String(frame.version)
        options.headers["Trellis-Salt"] = Self.hex16(frame.salt)
        // A frame the server cannot take in one message goes to the bucket; the message keeps its place and fence.
        let large = frame.bytes.count + Self.headerRoom > js.connection.serverInfo.maxPayload
        if large {
            do {
                let (object, digest) = try putRecordObject(frame, js)
                options.headers["Trellis-Object"] = object
                options.headers["Trellis-Digest"] = digest
            } catch let error as NATSError {
                resetConnection(after: error)
                throw error
            }
        }
        let ack: PubAck
        do {
            ack = try js.publish(subject, payload: large ? [] : frame.bytes, options: options)
        } catch let error as NATSError where error.code == .wrongLastSequence {
            throw fail(
                .fenced,
                "another writer extends stream \(streamName): record \(frame.sequence) expected the stream's last "
                    + "message \(expected), the server has \(error.lastSequence.map(String.init) ?? "another"); "
                    + "publishing stopped")
        } catch let error as NATSError {
            resetConnection(after: error)
            throw error
        }
        if ack.duplicate {
            // A retry whose first copy was stored, or another writer's record of the same number: only the bytes tell.
            let stored = try js.message(stream: streamName, sequence: ack.sequence)
            guard try recordBytes(stored, js) == frame.bytes else {
                throw fail(
                    .fenced,
                    "another writer published a different record \(frame.sequence) to stream \(streamName); "
                        + "publishing stopped")
            }
        }
        state.locked {
            $0.published = frame.sequence
            $0.streamSequence = ack.sequence
        }
    }

    /// Room left under `max_payload` for a record message's headers.
    static let headerRoom = 1024

    /// The object that holds a record too large for one message: `rec-<n>`, the frame bytes
    /// (replication-format.md, "Records over max_payload"). A retry finds its own object there and keeps it; an object
    /// of that name with other bytes is another writer's record, and publishing stops (`fenced`).
    private func putRecordObject(_ frame: DurableFrame, _ js: JetStream) throws -> (name: String, digest: String) {
        let bucket = try ObjectStore(js, bucket: "trellis-\(name)")
        let object = "rec-\(frame.sequence)"
        let digest = ObjectStore.digest(of: frame.bytes)
        do {
            let existing = try bucket.info(object)
            if existing.digest == digest && existing.size == UInt64(frame.bytes.count) {
                state.locked { if !$0.largeRecords.contains(frame.sequence) { $0.largeRecords.append(frame.sequence) } }
                return (object, digest)
            }
            throw fail(
                .fenced,
                "bucket trellis-\(name) holds a different object \(object) (another writer's record \(frame.sequence)); "
                    + "publishing stopped")
        } catch let error as NATSError where error.code == .objectNotFound {
        }
        let info = try bucket.put(object, data: frame.bytes)
        state.locked { $0.largeRecords.append(frame.sequence) }
        return (object, info.digest)
    }

    /// The frame bytes a stored record message stands for: its payload, or the object it names.
    private func recordBytes(_ message: StoredMessage, _ js: JetStream) throws -> [UInt8] {
        guard let object = message.headers?["Trellis-Object"] else { return message.payload }
        do {
            return try ObjectStore(js, bucket: "trellis-\(name)").get(object)
        } catch let error as NATSError where error.code == .objectNotFound {
            return []
        }
    }

    /// Reads the stream's last record and positions the journal reader after it, checking that the stream's last
    /// record is this store's.
    private func resume(_ js: JetStream, _ step: inout StepState) throws {
        var config = StreamConfig(name: streamName, subjects: [subject])
        config.duplicateWindow = .seconds(600)
        do {
            _ = try js.createStream(config)
        } catch let error as NATSError where error.code == .streamNameInUse {
            _ = try js.streamInfo(streamName)
        }
        var last: UInt64 = 0
        var streamSequence: UInt64 = 0
        var lastBytes: [UInt8]?
        do {
            let message = try js.lastMessage(stream: streamName, subject: subject)
            guard let id = message.headers?["Nats-Msg-Id"].flatMap({ UInt64($0) }) else {
                throw fail(.failed, "the last message of stream \(streamName) has no record number (Nats-Msg-Id)")
            }
            last = id
            streamSequence = message.sequence
            lastBytes = try recordBytes(message, js)
        } catch let error as NATSError where error.code == .messageNotFound {
        }
        let path = directory.path
        if last > 0 {
            // The stream's last record must be this store's own record of that number.
            let check = DurableFrameReader(directory: path, after: last - 1)
            defer { check.close() }
            // The durable mark is read before the record: a record made durable between the two reads would
            // otherwise look like one this store never wrote, and the stream's record would be taken as its own.
            let durable = try check.durableSequence()
            let mine: [DurableFrame]
            do {
                mine = try check.next(limit: 1)
            } catch let error as TrellisError where error.code == .historyCompacted {
                mine = []
            } catch let error as TrellisError {
                throw fail(.failed, "reading the journal to resume: \(error)")
            }
            // A promoted replica's first resume meets the record it was promoted at: applied from the stream, so
            // the stream's, though its own bytes differ (its own salt).
            let trusted = promotedAt.map { $0.record == last && $0.streamSequence == streamSequence } ?? false
            if !trusted, let record = mine.first, record.sequence == last, record.bytes != lastBytes {
                throw fail(
                    .fenced,
                    "stream \(streamName) holds a record \(last) this store did not write (another writer); "
                        + "publishing stopped")
            }
            if mine.isEmpty, durable < last {
                throw fail(
                    .fenced,
                    "stream \(streamName) holds record \(last), which this store has not written (another writer); "
                        + "publishing stopped")
            }
        }
        // The schema, for a replica that starts from nothing (replication-format.md, "The schema"): the one record 1
        // was written in while the journal holds it (a migration may have come since), else the store's.
        let first = (try? ReplicaBootstrap.firstRecordSchema(directory: path)) ?? nil
        _ = try ObjectStore(js, bucket: "trellis-\(name)").put("schema", data: SchemaCodec.encode(first ?? schema))
        step.reader?.close()
        step.reader = DurableFrameReader(directory: path, after: last)
        state.locked {
            $0.published = last
            $0.streamSequence = streamSequence
            $0.resumed = true
        }
    }

    private func connect() throws -> NATSConnection {
        if let connection = state.locked({ $0.connection }), connection.status == .connected {
            return connection
        }
        disconnect()
        var options = self.options
        // The publisher reconnects (and resumes) itself: a connection that drops is replaced.
        options.maxReconnectAttempts = 0
        let connection = try NATSConnection(options)
        state.locked {
            $0.connection = connection
            $0.resumed = false
        }
        return connection
    }

    private func resetConnection(after error: NATSError) {
        // Whether the message was stored is unknown: resume from what the stream says.
        if error.code == .connectionLost || error.code == .timeout || error.code == .notConnected
            || error.code == .closed
        {
            disconnect()
        }
    }

    private func disconnect() {
        let connection = state.locked { s -> NATSConnection? in
            defer {
                s.connection = nil
                s.resumed = false
            }
            return s.connection
        }
        connection?.close()
    }

    private func fail(_ code: ReplicationError.Code, _ message: String) -> ReplicationError {
        let error = ReplicationError(code, message)
        state.locked { if $0.failure == nil { $0.failure = error } }
        return error
    }

    static func hex16(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

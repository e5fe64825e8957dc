import Foundation

/// A bucket of large objects on JetStream, laid out as NATS's own object store lays them out, so that its tools can
/// read what this writes: a stream `OBJ_<bucket>` capturing `$O.<bucket>.C.>` (chunks) and `$O.<bucket>.M.>`
/// (metadata). An object is its chunks, each at most `chunkSize` bytes (under the server's `max_payload`), published
/// on `$O.<bucket>.C.<nuid>`, then a JSON metadata message on `$O.<bucket>.M.<base64url(name)>` (size, chunk count,
/// `SHA-256=<base64url>` digest) that rolls up the name's earlier metadata. Replacing an object purges the earlier
/// version's chunks after the new metadata is stored.
///
/// ```swift
/// let bucket = try ObjectStore(jetStream, bucket: "checkpoints")
/// _ = try bucket.put("checkpoint-42", data: bytes)
/// let copy = try bucket.get("checkpoint-42")
/// ```
public struct ObjectStore: Sendable {
    /// The JetStream the bucket's stream lives in.
    public let jetStream: JetStream
    /// The bucket's name.
    public let bucket: String
    /// The stream holding the bucket: `OBJ_<bucket>`.
    public var streamName: String { "OBJ_" + bucket }

    /// Opens the bucket, creating its stream when there is none.
    public init(_ jetStream: JetStream, bucket: String) throws {
        guard !bucket.isEmpty,
            bucket.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") })
        else {
            throw NATSError(.invalidSubject, "bucket \"\(bucket)\": only letters, digits, _ and - are allowed")
        }
        self.jetStream = jetStream
        self.bucket = bucket
        do {
            _ = try jetStream.streamInfo(streamName)
        } catch let error as NATSError where error.code == .streamNotFound {
            var config = StreamConfig(name: streamName, subjects: ["$O.\(bucket).C.>", "$O.\(bucket).M.>"])
            config.discard = .new
            config.allowRollup = true
            config.allowDirect = true
            _ = try jetStream.createStream(config)
        }
    }

    /// The subject of a name's metadata: the name in URL-safe base64 (with padding, as NATS's store writes it).
    public func metadataSubject(_ name: String) -> String {
        let encoded = Data(name.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        return "$O.\(bucket).M.\(encoded)"
    }

    /// Stores `data` as `name`, replacing any earlier object of that name; returns the stored metadata.
    @discardableResult
    public func put(_ name: String, data: [UInt8], chunkSize: Int = 128 * 1024) throws -> ObjectInfo {
        precondition(chunkSize > 0, "chunks hold at least one byte")
        let earlier = try existingInfo(name)
        // Room for the publish's headers under max_payload.
        let size = max(1, min(chunkSize, jetStream.connection.serverInfo.maxPayload - 1024))
        let nuid = NUID.next()
        let chunkSubject = "$O.\(bucket).C.\(nuid)"
        var hash = SHA256()
        var chunks = 0
        do {
            var offset = 0
            while offset < data.count {
                let chunk = data[offset..<min(offset + size, data.count)]
                hash.update(chunk)
                _ = try jetStream.publish(
                    chunkSubject, payload: Array(chunk), options: .init(expectedStream: streamName))
                offset += chunk.count
                chunks += 1
            }
            let info = ObjectInfo(
                name: name, bucket: bucket, nuid: nuid, size: UInt64(data.count), modified: Date().ISO8601Format(),
                chunks: chunks, digest: "SHA-256=" + Self.base64URL(hash.finish()), deleted: nil,
                options: .init(maxChunkSize: size))
            var options = PublishOptions(expectedStream: streamName)
            options.headers["Nats-Rollup"] = "sub"
            _ = try jetStream.publish(
                metadataSubject(name), payload: Array(try JSONEncoder().encode(info)), options: options)
            if let earlier, earlier.nuid != nuid {
                try jetStream.purgeStream(streamName, subject: "$O.\(bucket).C.\(earlier.nuid)")
            }
            return info
        } catch {
            // Chunks without metadata are garbage: take them away if the server is still there.
            _ = try? jetStream.purgeStream(streamName, subject: chunkSubject)
            throw error
        }
    }

    /// Deletes `name` as NATS's object store does: metadata marked `deleted` (size and chunks 0) rolls up the name's
    /// earlier metadata, then the object's chunks are purged. Returns false when there was no such object.
    @discardableResult
    public func delete(_ name: String) throws -> Bool {
        guard var info = try existingInfo(name), info.deleted != true else { return false }
        let chunks = "$O.\(bucket).C.\(info.nuid)"
        info.deleted = true
        info.size = 0
        info.chunks = 0
        info.digest = ""
        info.modified = Date().ISO8601Format()
        var options = PublishOptions(expectedStream: streamName)
        options.headers["Nats-Rollup"] = "sub"
        _ = try jetStream.publish(
            metadataSubject(name), payload: Array(try JSONEncoder().encode(info)), options: options)
        try jetStream.purgeStream(streamName, subject: chunks)
        return true
    }

    /// The metadata of `name`; throws `objectNotFound`.
    public func info(_ name: String) throws -> ObjectInfo {
        guard let info = try existingInfo(name), info.deleted != true else {
            throw NATSError(.objectNotFound, "no object \(name) in bucket \(bucket)")
        }
        return info
    }

    /// The bytes of `name`, checked against the metadata's size and digest; throws `objectNotFound`, or
    /// `objectCorrupt` when they do not match. The chunks come through an ephemeral pull consumer on the object's chunk
    /// subject, many to a fetch, rather than one request a chunk.
    public func get(_ name: String) throws -> [UInt8] {
        let info = try info(name)
        let chunkSubject = "$O.\(bucket).C.\(info.nuid)"
        var data = [UInt8]()
        data.reserveCapacity(Int(clamping: info.size))
        var hash = SHA256()
        if info.chunks > 0 {
            var config = ConsumerConfig(deliverPolicy: .all, ackPolicy: .none, filterSubject: chunkSubject)
            config.inactiveThreshold = .seconds(30)
            let consumer = try jetStream.createConsumer(stream: streamName, config: config)
            defer { try? jetStream.deleteConsumer(stream: streamName, consumer: consumer.name) }
            var received = 0
            while received < info.chunks && data.count <= info.size {
                let batch = try jetStream.fetch(
                    stream: streamName, consumer: consumer.name,
                    batch: min(Self.chunksPerFetch, info.chunks - received),
                    timeout: .seconds(10), noWait: true)
                guard !batch.isEmpty else {
                    throw NATSError(
                        .objectCorrupt, "object \(name): chunk \(received + 1) of \(info.chunks) is missing")
                }
                for chunk in batch {
                    hash.update(chunk.message.payload)
                    data += chunk.message.payload
                }
                received += batch.count
            }
        }
        let digest = "SHA-256=" + Self.base64URL(hash.finish())
        guard data.count == info.size, digest == info.digest else {
            throw NATSError(
                .objectCorrupt,
                "object \(name): \(data.count) bytes with digest \(digest), its metadata says \(info.size) bytes, "
                    + "\(info.digest)")
        }
        return data
    }

    /// How many chunks one fetch asks for (16 MiB at 128 KiB a chunk).
    static let chunksPerFetch = 128

    private func existingInfo(_ name: String) throws -> ObjectInfo? {
        let stored: StoredMessage
        do {
            stored = try jetStream.lastMessage(stream: streamName, subject: metadataSubject(name))
        } catch let error as NATSError where error.code == .messageNotFound {
            return nil
        }
        do {
            return try JSONDecoder().decode(ObjectInfo.self, from: Data(stored.payload))
        } catch {
            throw NATSError(.objectCorrupt, "object \(name): unreadable metadata (\(error))")
        }
    }

    /// The digest an object of these bytes carries in its metadata: `SHA-256=<base64url>`.
    public static func digest(of data: [UInt8]) -> String {
        var hash = SHA256()
        hash.update(data)
        return "SHA-256=" + base64URL(hash.finish())
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_")
    }
}

/// An object's metadata, in the JSON NATS's object store uses.
public struct ObjectInfo: Sendable, Equatable, Codable {
    /// Options stored with the object.
    public struct Options: Sendable, Equatable, Codable {
        /// The chunk size it was written with.
        public var maxChunkSize: Int?

        enum CodingKeys: String, CodingKey {
            case maxChunkSize = "max_chunk_size"
        }
    }

    /// The object's name.
    public var name: String
    /// The bucket it is in.
    public var bucket: String
    /// The id naming its chunks' subject.
    public var nuid: String
    /// Its size in bytes.
    public var size: UInt64
    /// When it was stored (RFC 3339).
    public var modified: String
    /// How many chunks it has.
    public var chunks: Int
    /// `SHA-256=<base64url>` of its bytes.
    public var digest: String
    /// Whether it was deleted (the metadata stays as a marker).
    public var deleted: Bool?
    /// Options stored with it.
    public var options: Options?

    enum CodingKeys: String, CodingKey {
        case name, bucket, nuid, size, modified = "mtime", chunks, digest, deleted, options
    }
}

/// What stopped replication: a code to match and a message that says what happened.
public struct ReplicationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A matchable class of replication errors.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's text.
        public let rawValue: String
        /// A code with this text.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// The code's text.
        public var description: String { rawValue }

        /// Another writer extends the stream (the server refused the expected last sequence, or the stream holds a
        /// record of this number that this store did not write): publishing stopped, nothing forked.
        public static let fenced = Code("fenced")
        /// A bad argument (a store that cannot be published, a name that cannot be a subject).
        public static let invalidArgument = Code("invalid argument")
        /// A promotion was refused because the replica has not applied the stream's last record: it keeps following;
        /// promote it once it has caught up (`Replica.waitUntilApplied`).
        public static let notCaughtUp = Code("not caught up")
        /// Nothing has been published under the name yet (the server has no schema object for it): start the
        /// publisher first, or try again; nothing was created.
        public static let notPublished = Code("not published")
        /// The NATS server could not be reached, or did not answer in time, while a replica was being created or
        /// opened: nothing was created; try again (`trellis replica` does, for 30 s). `message` holds the client's
        /// error.
        public static let unreachable = Code("unreachable")
        /// Replication stopped for good: the journal cannot be read, or the stream is not a Trellis stream.
        public static let failed = Code("replication failed")
    }

    /// The error's class.
    public let code: Code
    /// What happened.
    public let message: String

    /// An error of this code.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The code and the message.
    public var description: String { "\(code): \(message)" }
}

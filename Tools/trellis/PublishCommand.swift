import Foundation
import Trellis
import TrellisReplication

/// `trellis publish DIR NATS-URL STREAM`: the writer's side of replication, from the command line.
struct PublishCommand: Command {
    static let name = "publish"
    static let summary = "publish a store's journal to NATS JetStream for replicas (optionally writing demo commits)"
    static let help = """
        usage: trellis publish DIR NATS-URL STREAM [--commits N] [--interval MS] [--exit]

        Opens the store in DIR for writing and publishes its records to NATS JetStream under the name STREAM (stream
        TRELLIS_<STREAM>), as a ReplicationPublisher in an app does: from the stream's last record on, each record
        once it is durable. Replicas follow it with 'trellis replica NATS-URL STREAM DIR'. Prints "published SEQ" as
        the stream grows. Runs until interrupted (SIGINT, SIGTERM), or with --exit until every record is published;
        exits 1 if publishing stops for good (another writer extends the stream: "fenced").

        With --commits N it is also a demo writer: DIR may be new (a notes store is created: Note with title and
        edits), and it commits N changes, one every MS milliseconds (default 100): inserts, updates and deletes of
        notes, each printed as "committed SEQ". It then exits once all of them are published. While the publisher
        holds DIR, no other process can write to it.

        options:
          --commits N     commit N demo changes while publishing, then exit once they are published
          --interval MS   the pause between demo commits (default 100)
          --exit          exit once every record of the store is published
        """

    var directory: String
    var url: String
    var stream: String
    var commits: Int?
    var interval: Int
    var exitWhenPublished: Bool

    init(parsing arguments: inout Arguments) throws {
        commits = try arguments.number("--commits", as: Int.self, minimum: 1)
        interval = try arguments.number("--interval", as: Int.self) ?? 100
        exitWhenPublished = arguments.flag("--exit")
        directory = try arguments.positional("DIR")
        url = try arguments.positional("NATS-URL")
        stream = try arguments.positional("STREAM")
    }

    /// The demo writer's schema: notes, inserted, edited and deleted.
    static let notes: Schema = try! Schema([
        EntityDescription(
            "Note", attributes: [AttributeDescription("title", .string), AttributeDescription("edits", .int)])
    ])

    func run(_ console: Console) throws -> ExitCode {
        let url = URL(fileURLWithPath: directory)
        let exists = FileManager.default.fileExists(atPath: url.appendingPathComponent("MANIFEST").path)
        guard exists || commits != nil else {
            throw CannotOpen("there is no store in \(directory) (give --commits N to create a demo store)")
        }
        let store: Store
        do {
            store =
                try exists
                ? Store(directory: url, schema: try JournalReader(directory: url).schema())
                : Store(directory: url, schema: Self.notes)
        } catch {
            throw CannotOpen("cannot open the store in \(directory): \(error)")
        }
        defer { try? store.close() }
        let publisher = try ReplicationPublisher(store: store, url: self.url, name: stream)
        let interruption = Interruption()
        publisher.start()
        defer { publisher.stop() }
        var shown = UInt64.max
        func show() {
            let published = publisher.publishedSequence
            if published != shown {
                // Unbuffered, so that a process reading the output sees each line as it is written.
                FileHandle.standardOutput.write(Data("published \(published)\n".utf8))
                shown = published
            }
        }
        if let commits {
            var notes: [ObjectID] = []
            for i in 0..<commits {
                try store.write { tx in
                    if i % 5 == 4, !notes.isEmpty {
                        try tx.delete(notes.removeFirst())
                    } else if i % 2 == 0 || notes.isEmpty {
                        notes.append(try tx.insert("Note", ["title": .string("note \(i)"), "edits": .int(0)]))
                    } else {
                        try tx.set(notes[i % notes.count], "edits", .int(Int64(i)))
                    }
                }
                FileHandle.standardOutput.write(Data("committed \(store.snapshot.sequence)\n".utf8))
                show()
                if let failure = publisher.failure { throw CommandFailure("publishing stopped: \(failure.message)") }
                if interruption.wait(milliseconds: interval) { return .ok }
            }
        }
        let last = store.snapshot.sequence
        while true {
            show()
            if let failure = publisher.failure { throw CommandFailure("publishing stopped: \(failure.message)") }
            if (commits != nil || exitWhenPublished) && publisher.publishedSequence >= last { break }
            if interruption.wait(milliseconds: 20) { break }
        }
        // The sequence may have moved between the last line and the check that ended the wait.
        show()
        return .ok
    }
}

import Foundation
import Trellis
import TrellisReplication

/// `trellis replica NATS-URL STREAM DIR`: keeps a read-only replica of a published store in DIR.
struct ReplicaCommand: Command {
    static let name = "replica"
    static let summary = "keep a read-only replica of a store published to NATS JetStream in a local directory"
    static let help = """
        usage: trellis replica NATS-URL STREAM DIR [--until SEQ] [--retry SECONDS]

        Applies the records a ReplicationPublisher publishes to NATS JetStream under the name STREAM (stream
        TRELLIS_<STREAM>) to the store in DIR, creating it on first use (its schema comes from the server; until a
        publisher has put one there it prints "waiting for a publisher of STREAM" and waits), and resuming after its
        last record when it exists. While the server cannot be reached or does not answer in time, it prints "cannot
        reach NATS-URL yet" and tries again every quarter second, for 30 seconds (--retry) before it gives up (exit 3).
        A migration by the writer is applied as recovery applies
        one, and the replica goes on in the new schema. Prints "applied SEQ" as records are applied. Runs until
        interrupted (SIGINT, SIGTERM), until record SEQ is applied with --until, or until the replica fails (exit 1:
        a gap or damaged record in the stream). The writer's side is 'trellis publish'. Read the replica with the other
        commands (export, find, info) or open it in a program with Store(directory:schema:options: .follower).

        options:
          --until SEQ        exit 0 once record SEQ is applied
          --retry SECONDS    how long to keep trying to reach the server at start (default 30; 0: give up at once)
        """

    var url: String
    var stream: String
    var directory: String
    var until: UInt64?
    var retrySeconds: Int

    init(parsing arguments: inout Arguments) throws {
        until = try arguments.number("--until", as: UInt64.self)
        retrySeconds = try arguments.number("--retry", as: Int.self) ?? 30
        url = try arguments.positional("NATS-URL")
        stream = try arguments.positional("STREAM")
        directory = try arguments.positional("DIR")
    }

    func run(_ console: Console) throws -> ExitCode {
        // SIGINT and SIGTERM end the loops below; the replica then closes its store cleanly.
        let interruption = Interruption()
        // A replica started before its publisher waits for the publisher's first schema, as a follower waits for
        // the writer's records: started side by side, the two commands work in either order.
        var waiting = false
        // A server that is starting, restarting or too busy to answer is not a reason to give up at once: the replica
        // keeps trying for a while, as a client of a database server retries its first connection.
        var unreachableSince: ContinuousClock.Instant?
        let replica: Replica
        while true {
            do {
                replica = try Replica(url: url, name: stream, directory: URL(fileURLWithPath: directory))
                break
            } catch let error as ReplicationError where error.code == .notPublished {
                // The server answered: a later loss of it starts a new window.
                unreachableSince = nil
                if !waiting {
                    FileHandle.standardOutput.write(Data("waiting for a publisher of \(stream)\n".utf8))
                    waiting = true
                }
                if interruption.wait(milliseconds: 250) { return .ok }
            } catch let error as ReplicationError where error.code == .unreachable {
                let now = ContinuousClock.now
                let since = unreachableSince ?? now
                guard now - since < .seconds(retrySeconds) else {
                    throw CannotOpen("cannot reach \(url) (tried for \(retrySeconds) s): \(error)")
                }
                if unreachableSince == nil {
                    FileHandle.standardOutput.write(Data("cannot reach \(url) yet (\(error.message)); retrying\n".utf8))
                    unreachableSince = now
                }
                if interruption.wait(milliseconds: 250) { return .ok }
            } catch {
                throw CannotOpen("cannot open the replica in \(directory): \(error)")
            }
        }
        replica.start()
        var shown = UInt64.max
        while true {
            let applied = replica.appliedSequence
            if applied != shown {
                // Unbuffered, so that a process reading the output sees each line as it is written.
                FileHandle.standardOutput.write(Data("applied \(applied)\n".utf8))
                shown = applied
            }
            if let failure = replica.failure {
                replica.stop()
                throw CommandFailure("the replica stopped: \(failure.message)")
            }
            if let until, applied >= until { break }
            // Waits a little for a signal between looks at the replica.
            if interruption.wait(milliseconds: 20) { break }
        }
        replica.stop()
        return .ok
    }
}

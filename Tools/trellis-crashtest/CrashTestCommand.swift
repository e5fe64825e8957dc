import Foundation
import Trellis
import TrellisReplication

/// The command line of `trellis-crashtest`, parsed by hand (the package takes no dependencies).
///
///     trellis-crashtest run --dir PATH --commits N [--compact-every N] [--segment-bytes N] [--salvage]
///                           [--point-in-time] [--no-crash-points] [--times] [--unsynced] [--hold]
///                           [--publish URL,NAME]
///     trellis-crashtest repair --dir PATH
///     trellis-crashtest notes --dir PATH [--add TEXT]
///     trellis-crashtest errands --dir PATH [--add TITLE,MOOD,SIZE]
///     trellis-crashtest seed-contacts --dir PATH [--people N]
///     trellis-crashtest migrate-contacts --dir PATH [--add NAME]
///     trellis-crashtest dump --dir PATH
///     trellis-crashtest profiles --dir PATH --add ROUND
///     trellis-crashtest tags --dir PATH --add ROUND
///     trellis-crashtest metadata --dir PATH --add ROUND
///     trellis-crashtest history-child --dir PATH --commits ROUNDS
///     trellis-crashtest follow --dir PATH --commits UNTIL
///     trellis-crashtest ordered --dir PATH [--add COMMITS]
///     trellis-crashtest mixtape --dir PATH
///
/// `run` opens (or creates) the store, prints `opened K` for the sequence number it recovered, then commits the
/// deterministic transactions K+1…N in per-commit durability, printing `ack N` after each commit returns (written
/// straight to the descriptor, so a line printed is a line the parent can read even after SIGKILL), `compacted N`
/// after each compaction, and `closed N` at the end (with `--times`, each `ack N T` also says when the commit returned:
/// T in nanoseconds of `CLOCK_MONOTONIC`, which every process of the machine shares, for the follow latency; with
/// `--unsynced`, commits are in `.none` durability and nothing is synced before `close`; with `--hold`, it prints
/// `holding` after the last commit and waits to be killed instead of closing); it opens with `.tolerateTornTail`, or `.salvage`
/// (`--salvage`) or `.pointInTime` (`--point-in-time`). `repair` opens with salvage (which rewrites a damaged store) and
/// prints `repaired K`.
///
/// The migration commands (see `ContactsFixture`): `notes` opens a store of `Note` model objects, saves one more note
/// with `--add`, and prints them all (`NotesCommand`); `errands` does the same with `Errand` objects, whose attributes
/// are enums (`ErrandsCommand`). `seed-contacts` creates the v1 contacts store of the migration
/// tests (150 people unless `--people`) and prints `seeded K`. `migrate-contacts` opens a v1 contacts store with the
/// v2 schema (a migration), printing `opening` before and `migrated K` after the open returns (with `--add NAME`, then
/// commits a person of that name and prints `added K`), then `closed K` and
/// `took OPEN TOTAL` (microseconds from `opening` to the open's return and to the end, for aiming kills); with
/// `TRELLIS_CRASH_AT=after-migration-segment` or `after-migration-manifest` it dies inside the migration's commit.
/// `dump` opens any store read-only with the schema it holds and prints `ContactsFixture.dump`, one line each.
/// `profiles` runs one round of the composite attributes' round trip (`ProfilesCommand`); `tags` one of the
/// collection attributes' (`TagsCommand`); `metadata` one of typed open metadata's (`MetadataCommand`).
/// `history-child` makes ROUNDS rounds of note commits with compactions in a store that keeps its history
/// (`HistoryChildCommand`).
/// `mixtape` opens a store of ordered playlists with the next models (a migration), prints, edits and prints them
/// (`MixtapeCommand`).
/// `ordered` prints every ordered list of the store `OrderedRelationshipTests` writes (`OrderedCommand`).
///
/// Every command installs the crash-point handler (`CrashAtPoint`: `TRELLIS_CRASH_AT`, `TRELLIS_CRASH_SKIP`) before it
/// opens a store, unless given `--no-crash-points`: then the process is the library as an app has it, and the tests
/// check that the variables cannot stop it.
///
/// Errors print `error: …` and exit 1; a usage error exits 64.
struct CrashTestCommand {
    enum Action: String {
        case run
        case repair
        case notes
        case errands
        case seedContacts = "seed-contacts"
        case migrateContacts = "migrate-contacts"
        case dump
        case profiles
        case tags
        case metadata
        case historyChild = "history-child"
        case follow
        case ordered
        case mixtape
    }

    var action: Action
    var directory: URL
    var commits = 100
    var compactEvery = 0
    var segmentBytes = 64 << 20
    var salvage = false
    var pointInTime = false
    var add: String?
    var people = ContactsFixture.people
    /// Whether `TRELLIS_CRASH_AT` may stop this process (`--no-crash-points` says no).
    var crashPoints = true
    /// Whether each `ack` line carries the monotonic time the commit returned.
    var times = false
    /// Whether commits are left unsynced (`.none` durability).
    var unsynced = false
    /// Whether the store stays open, unclosed, after the commits until the process is killed.
    var hold = false
    /// `URL,NAME`: `run` publishes the store's records to that NATS server under that name while it commits.
    var publish: String?

    static let usage =
        "usage: trellis-crashtest run --dir PATH --commits N [--compact-every N] [--segment-bytes N] [--salvage]\n"
        + "                             [--point-in-time] [--no-crash-points] [--times] [--unsynced] [--hold]\n"
        + "                             [--publish URL,NAME]\n"
        + "       trellis-crashtest repair --dir PATH\n"
        + "       trellis-crashtest notes --dir PATH [--add TEXT]\n"
        + "       trellis-crashtest errands --dir PATH [--add TITLE,MOOD,SIZE]\n"
        + "       trellis-crashtest seed-contacts --dir PATH [--people N]\n"
        + "       trellis-crashtest migrate-contacts --dir PATH [--add NAME]\n"
        + "       trellis-crashtest dump --dir PATH\n"
        + "       trellis-crashtest profiles --dir PATH --add ROUND\n"
        + "       trellis-crashtest tags --dir PATH --add ROUND\n"
        + "       trellis-crashtest metadata --dir PATH --add ROUND\n"
        + "       trellis-crashtest history-child --dir PATH --commits ROUNDS\n"
        + "       trellis-crashtest follow --dir PATH --commits UNTIL\n"
        + "       trellis-crashtest ordered --dir PATH [--add COMMITS]\n"
        + "       trellis-crashtest mixtape --dir PATH"

    init(arguments: [String]) throws(UsageError) {
        guard let first = arguments.first, let action = Action(rawValue: first) else { throw UsageError() }
        self.action = action
        var directory: URL?
        var rest = arguments.dropFirst()
        func number(_ name: String) throws(UsageError) -> Int {
            guard let text = rest.popFirst(), let n = Int(text), n >= 0 else { throw UsageError(name + " needs N") }
            return n
        }
        while let flag = rest.popFirst() {
            switch flag {
            case "--dir":
                guard let path = rest.popFirst() else { throw UsageError("--dir needs a path") }
                directory = URL(fileURLWithPath: path)
            case "--commits": commits = try number(flag)
            case "--compact-every": compactEvery = try number(flag)
            case "--segment-bytes": segmentBytes = try number(flag)
            case "--salvage": salvage = true
            case "--point-in-time": pointInTime = true
            case "--add":
                guard let text = rest.popFirst() else { throw UsageError("--add needs a text") }
                add = text
            case "--people": people = try number(flag)
            case "--no-crash-points": crashPoints = false
            case "--times": times = true
            case "--unsynced": unsynced = true
            case "--hold": hold = true
            case "--publish":
                guard let text = rest.popFirst(), text.contains(",") else {
                    throw UsageError("--publish needs URL,NAME")
                }
                publish = text
            default: throw UsageError("unknown option \(flag)")
            }
        }
        guard let directory else { throw UsageError("--dir is required") }
        self.directory = directory
    }

    func execute() throws {
        switch action {
        case .run: try run()
        case .repair: try repair()
        case .notes: try NotesCommand.run(directory: directory, adding: add)
        case .errands: try ErrandsCommand.run(directory: directory, adding: add)
        case .seedContacts: try seedContacts()
        case .migrateContacts: try migrateContacts()
        case .dump: try dump()
        case .profiles: try ProfilesCommand.run(directory: directory, round: Int(add ?? "0") ?? 0)
        case .tags: try TagsCommand.run(directory: directory, round: Int(add ?? "0") ?? 0)
        case .metadata: try MetadataCommand.run(directory: directory, round: Int(add ?? "0") ?? 0)
        case .historyChild: try HistoryChildCommand.run(directory: directory, rounds: commits)
        case .follow: try FollowerCommand.run(directory: directory, until: UInt64(commits))
        case .ordered: try OrderedCommand.run(directory: directory, commits: Int(add ?? "0") ?? 0)
        case .mixtape: try MixtapeCommand.run(directory: directory)
        }
    }

    private func run() throws {
        var options = StoreOptions(
            durability: unsynced ? .none : .perCommit,
            recovery: salvage ? .salvage : pointInTime ? .pointInTime : .tolerateTornTail,
            compaction: .manual,
            segmentBytes: segmentBytes)
        options.compressionLevel = 1
        let store = try Store(directory: directory, schema: CrashWorkload.schema, options: options)
        let start = Int(store.snapshot.sequence)
        say("opened \(start)")
        // With --publish, a publisher beside the commits, as an app that replicates runs one.
        var publisher: ReplicationPublisher?
        if let publish {
            let parts = publish.split(separator: ",", maxSplits: 1).map(String.init)
            publisher = try ReplicationPublisher(store: store, url: parts[0], name: parts[1])
            publisher?.start()
        }
        for n in stride(from: start + 1, through: commits, by: 1) {
            let commit = try CrashWorkload.commit(n, to: store)
            say(times ? "ack \(commit.sequence) \(monotonicNanoseconds())" : "ack \(commit.sequence)")
            if compactEvery > 0 && n % compactEvery == 0 {
                try store.compact()
                say("compacted \(n)")
            }
        }
        if hold {
            say("holding")
            while true { sleep(60) }
        }
        if let publisher {
            // Everything committed reaches the stream before the store closes.
            guard publisher.waitUntilPublished(store.snapshot.sequence, timeout: .seconds(120)) else {
                throw ReplicationError(
                    .failed, "not published: \(publisher.failure?.message ?? publisher.lastError ?? "")")
            }
            publisher.stop()
            say("published \(publisher.publishedSequence)")
        }
        try store.close()
        say("closed \(store.snapshot.sequence)")
    }

    private func repair() throws {
        let store = try Store(
            directory: directory, schema: CrashWorkload.schema, options: StoreOptions(recovery: .salvage))
        try store.close()
        say("repaired \(store.snapshot.sequence)")
    }
}

extension CrashTestCommand {
    private func seedContacts() throws {
        let store = try Store(directory: directory, schema: ContactsFixture.v1)
        try ContactsFixture.seed(store, people: people)
        try store.close()
        say("seeded \(store.snapshot.sequence)")
    }

    private func migrateContacts() throws {
        let start = ProcessInfo.processInfo.systemUptime
        say("opening")
        let store = try Store(directory: directory, schema: ContactsFixture.v2)
        say("migrated \(store.snapshot.sequence)")
        let opened = ProcessInfo.processInfo.systemUptime - start
        if let add {
            // A commit in the new schema after the migration (the follower tests).
            try store.write { tx in _ = try tx.insert("Person", ["fullName": .string(add), "age": .int(30)]) }
            say("added \(store.snapshot.sequence)")
        }
        try store.close()
        say("closed \(store.snapshot.sequence)")
        say("took \(Int(opened * 1_000_000)) \(Int((ProcessInfo.processInfo.systemUptime - start) * 1_000_000))")
    }

    private func dump() throws {
        let schema = try JournalReader(directory: directory).schema()
        let store = try Store(directory: directory, schema: schema, options: StoreOptions(readOnly: true))
        for line in try ContactsFixture.dump(store.snapshot) { say(line) }
        try store.close()
    }
}

struct UsageError: Error {
    var message: String
    init(_ message: String = "") { self.message = message }
}

/// Nanoseconds of `CLOCK_MONOTONIC`: the same clock in every process of the machine.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// Writes a line straight to standard output (no buffer that a SIGKILL could lose).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

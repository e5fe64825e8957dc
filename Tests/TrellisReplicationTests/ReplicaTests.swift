import Dispatch
import Foundation
import Synchronization
import Testing
import Trellis
import TrellisJournal
import TrellisNATS
import TrellisReplication

#if canImport(Glibc)
import Glibc
#endif

/// `trellis replica` in a child process, fed by a publisher of a writer in this one, against a real nats-server.
@Suite(.serialized) struct ReplicaTests {
    final class Project: Model {
        @Attribute var name = ""
        @Relationship(deleteRule: .cascade, inverse: \Task.project) var tasks: [Task]
    }

    final class Task: Model {
        @Attribute var title = ""
        @Attribute var count = 0
        @Relationship var project: Project?
    }

    /// The next version of the models: tasks gain `done` (an inferred migration: one record, which replicas apply).
    enum V2 {
        final class Project: Model {
            @Attribute var name = ""
            @Relationship(deleteRule: .cascade, inverse: \Task.project) var tasks: [Task]
        }

        final class Task: Model {
            @Attribute var title = ""
            @Attribute var count = 0
            @Attribute var done = false
            @Relationship var project: Project?
        }
    }

    /// The `trellis` tool, next to the test bundle in the products directory.
    static let tool: URL = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("trellis")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: ".build/debug/trellis")
    }()

    /// What a child printed: all of it, and the last `applied N`.
    final class Lines: Sendable {
        let applied = Mutex<UInt64?>(nil)
        let output = Mutex("")
    }

    /// A running `trellis replica`, its output read line by line.
    final class Child {
        let process = Process()
        let lines = Lines()
        let exited = DispatchSemaphore(value: 0)
        /// Signalled once the reader has read the output to its end.
        let drained = DispatchSemaphore(value: 0)

        init(_ arguments: [String], executable: URL = ReplicaTests.tool) throws {
            process.executableURL = executable
            process.arguments = arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            let reader = pipe.fileHandleForReading
            let lines = self.lines
            let drained = self.drained
            let thread = Thread {
                defer { drained.signal() }
                // read(2) with EINTR retried: FileHandle.availableData traps on an interrupted read (SIGCHLD).
                var buffer = [UInt8](repeating: 0, count: 4_096)
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(reader.fileDescriptor, $0.baseAddress, $0.count) }
                    if count < 0 && errno == EINTR { continue }
                    if count <= 0 { break }
                    let text = lines.output.locked { o in
                        o += String(decoding: buffer[0..<count], as: UTF8.self)
                        return o
                    }
                    let found = text.split(separator: "\n").filter { $0.hasPrefix("applied ") }
                    if let last = found.last, let n = UInt64(last.dropFirst("applied ".count)) {
                        lines.applied.locked { $0 = n }
                    }
                }
            }
            let exited = self.exited
            process.terminationHandler = { _ in exited.signal() }
            try process.run()
            thread.start()
        }

        var applied: UInt64? { lines.applied.locked { $0 } }
        var output: String { lines.output.locked { $0 } }

        /// Waits until it printed `applied N` with N ≥ `sequence`; false after `seconds`.
        func waitForApplied(_ sequence: UInt64, seconds: Double) -> Bool {
            let deadline = Date(timeIntervalSinceNow: seconds)
            while Date() < deadline {
                if let n = applied, n >= sequence { return true }
                if !process.isRunning { return applied.map { $0 >= sequence } ?? false }
                Thread.sleep(forTimeInterval: 0.01)
            }
            return false
        }

        /// Waits until its output holds a line that `matches`; false after `seconds` or once it exited without one.
        func waitForLine(seconds: Double, _ matches: (Substring) -> Bool) -> Bool {
            let deadline = Date(timeIntervalSinceNow: seconds)
            while Date() < deadline {
                if output.split(separator: "\n").contains(where: matches) { return true }
                if !process.isRunning { return output.split(separator: "\n").contains(where: matches) }
                Thread.sleep(forTimeInterval: 0.01)
            }
            return false
        }

        /// Waits for it to exit; its status, or nil (and it is killed) after `seconds`. Once it has exited, its output
        /// is read to the end (for up to 5 s) first, so that a failure message shows what it printed last.
        func waitForExit(seconds: Double) -> Int32? {
            if exited.wait(timeout: .now() + seconds) == .timedOut {
                kill(process.processIdentifier, SIGKILL)
                return nil
            }
            _ = drained.wait(timeout: .now() + 5)
            return process.terminationStatus
        }

        func sigkill() -> Int32? {
            kill(process.processIdentifier, SIGKILL)
            return waitForExit(seconds: 10)
        }
    }

    /// `trellis export DIR`'s entities: the objects, ids, values and relationships.
    static func export(_ directory: URL) throws -> String {
        let process = Process()
        process.executableURL = tool
        process.arguments = ["export", directory.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let text = String(decoding: data, as: UTF8.self)
        // Everything from the entities on: the header names the directory, which differs.
        guard let range = text.range(of: "\"entities\"") else { return "" }
        return String(text[range.lowerBound...])
    }

    /// Commits `count` times: a project with three tasks every tenth commit, a cascade delete of the oldest project
    /// every tenth (offset by five), and updates or inserts of tasks in between.
    static func work(_ context: ModelContext, count: Int, live: inout [(Project, [Task])], start: Int) throws {
        for i in start..<(start + count) {
            if i % 10 == 0 || live.isEmpty {
                let project = Project()
                project.name = "p\(i)"
                context.insert(project)
                var tasks: [Task] = []
                for t in 0..<3 {
                    let task = Task()
                    task.title = "t\(i)-\(t)"
                    task.project = project
                    context.insert(task)
                    tasks.append(task)
                }
                live.append((project, tasks))
            } else if i % 10 == 5, live.count > 3 {
                let (project, _) = live.removeFirst()
                context.delete(project)
            } else if i % 3 == 0 {
                let (project, tasks) = live[i % live.count]
                let task = Task()
                task.title = "extra\(i)"
                task.project = project
                context.insert(task)
                live[i % live.count].1 = tasks + [task]
            } else {
                let tasks = live[i % live.count].1
                tasks[i % tasks.count].count += i
            }
            try context.save()
        }
    }

    /// `work` with the V2 models, after the migration: the same mix, and updates also flip `done`. `live` starts as
    /// the projects the store holds, oldest first.
    static func workV2(_ context: ModelContext, count: Int, start: Int) throws {
        var live = try context.fetch(FetchDescriptor<V2.Project>())
            .sorted { Int($0.name.dropFirst()) ?? 0 < Int($1.name.dropFirst()) ?? 0 }
            .map { ($0, $0.tasks) }
        for i in start..<(start + count) {
            if i % 10 == 0 || live.isEmpty {
                let project = V2.Project()
                project.name = "p\(i)"
                context.insert(project)
                var tasks: [V2.Task] = []
                for t in 0..<3 {
                    let task = V2.Task()
                    task.title = "t\(i)-\(t)"
                    task.project = project
                    context.insert(task)
                    tasks.append(task)
                }
                live.append((project, tasks))
            } else if i % 10 == 5, live.count > 3 {
                let (project, _) = live.removeFirst()
                context.delete(project)
            } else if i % 3 == 0 {
                let (project, tasks) = live[i % live.count]
                let task = V2.Task()
                task.title = "extra\(i)"
                task.done = true
                task.project = project
                context.insert(task)
                live[i % live.count].1 = tasks + [task]
            } else {
                // Every live project keeps its three first tasks (only whole projects are deleted).
                let tasks = live[i % live.count].1
                tasks[i % tasks.count].count += i
                tasks[i % tasks.count].done.toggle()
            }
            try context.save()
        }
    }

    @Test func twoReplicasInOtherProcessesMatchTheWriterThroughAMigrationAndOneResumesAfterSIGKILL() throws {
        let server = try NATSServer()
        defer { server.tearDown() }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-replica-\(UUID())")
        defer { try? FileManager.default.removeItem(at: base) }
        let writerURL = base.appendingPathComponent("writer")
        let replicaURL = base.appendingPathComponent("replica")
        // 5,000 commits, the migration (record 5,001), 5,000 more.
        let total = 10_001
        let store = try Store(directory: writerURL, models: [Project.self, Task.self])
        let publisher = try ReplicationPublisher(store: store, url: server.url, name: "tasks")
        publisher.start()
        let context = ModelContext(store)
        var live: [(Project, [Task])] = []
        try Self.work(context, count: 2_000, live: &live, start: 0)
        #expect(publisher.waitUntilPublished(2_000, timeout: .seconds(120)))

        // The replica starts while the writer goes on; it is killed mid-stream and started again.
        let arguments = ["replica", server.url, "tasks", replicaURL.path]
        // A second replica runs through the whole test, untouched.
        let otherURL = base.appendingPathComponent("other")
        let other = try Child(["replica", server.url, "tasks", otherURL.path, "--until", "\(total)"])
        let first = try Child(arguments)
        #expect(first.waitForApplied(500, seconds: 120), "\(first.output)")
        try Self.work(context, count: 3_000, live: &live, start: 2_000)
        #expect(first.sigkill() != nil)
        let killedAt = first.applied ?? 0
        #expect(killedAt >= 500)

        let second = try Child(arguments + ["--until", "\(total)"])
        // The writer migrates its schema in the middle (reopened with the V2 models) and goes on publishing; the
        // replicas (no model: the tool's) apply the migration record and follow.
        #expect(publisher.stop() && publisher.failure == nil)
        try store.close()
        let migrated = try Store(directory: writerURL, models: [V2.Project.self, V2.Task.self])
        #expect(migrated.schema.history.last?.sequence == 5_001)
        let publisherV2 = try ReplicationPublisher(store: migrated, url: server.url, name: "tasks")
        publisherV2.start()
        try Self.workV2(ModelContext(migrated), count: total - 5_001, start: 5_000)
        #expect(migrated.snapshot.sequence == UInt64(total))
        #expect(publisherV2.waitUntilPublished(UInt64(total), timeout: .seconds(180)))
        #expect(second.waitForExit(seconds: 300) == 0, "\(second.output)")
        #expect(second.applied == UInt64(total))
        #expect(other.waitForExit(seconds: 300) == 0, "\(other.output)")
        #expect(other.applied == UInt64(total))
        #expect(publisherV2.stop() && publisherV2.failure == nil)
        try migrated.close()

        // The replica's journal holds records 1 through the last, each once, in order (the reader throws on a gap or
        // a repeat), and its objects are the writer's, object for object.
        let writerExport = try Self.export(writerURL)
        #expect(!writerExport.isEmpty && writerExport.contains("\"Task\"") && writerExport.contains("\"done\""))
        for url in [replicaURL, otherURL] {
            let reader = DurableFrameReader(directory: url.path, after: 0)
            var count: UInt64 = 0
            while true {
                let frames = try reader.next(limit: 1_000)
                if frames.isEmpty { break }
                for frame in frames {
                    count += 1
                    #expect(frame.sequence == count)
                }
            }
            reader.close()
            #expect(count == UInt64(total))
            #expect(try Self.export(url) == writerExport)
        }
    }

    @Test func creatingAReplicaFromAnUnreachableServerThrowsUnreachableAndCreatesNothing() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-replica-\(UUID())")
        defer { try? FileManager.default.removeItem(at: base) }
        let error = #expect(throws: ReplicationError.self) {
            _ = try Replica(url: "nats://127.0.0.1:1", name: "nowhere", directory: base)
        }
        #expect(error?.code == .unreachable, "\(String(describing: error))")
        #expect(error?.message.contains("connection failed") == true, "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: base.path))
    }

    @Test func aReplicaServesTheStoreReadOnlyWithItsLag() throws {
        let server = try NATSServer()
        defer { server.tearDown() }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-replica-\(UUID())")
        defer { try? FileManager.default.removeItem(at: base) }
        let store = try Store(directory: base.appendingPathComponent("writer"), models: [Project.self, Task.self])
        let publisher = try ReplicationPublisher(store: store, url: server.url, name: "inproc")
        let context = ModelContext(store)
        var live: [(Project, [Task])] = []
        try Self.work(context, count: 50, live: &live, start: 0)
        #expect(try publisher.publishPending() == 50)
        let replica = try Replica(url: server.url, name: "inproc", directory: base.appendingPathComponent("replica"))
        replica.start()
        #expect(replica.waitUntilApplied(50, timeout: .seconds(60)))
        #expect(replica.replicaLag.records == 0 && replica.failure == nil)
        let view = ModelContext(replica.store)
        let projects = try view.fetch(FetchDescriptor<Project>())
        let expected = try ModelContext(store).fetch(FetchDescriptor<Project>())
        #expect(projects.map(\.name).sorted() == expected.map(\.name).sorted() && !projects.isEmpty)
        #expect(replica.store.isReadOnly)
        #expect(throws: TrellisError.self) {
            try replica.store.write { tx in _ = try tx.insert("Project", ["name": "nope"]) }
        }
        #expect(replica.stop())
        #expect(publisher.stop())
        try store.close()
    }
}

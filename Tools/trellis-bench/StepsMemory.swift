import Foundation

/// W10: each engine's resident memory with N items loaded, measured in a child process of its own (this same binary,
/// re-run with the hidden `--w10-child ENGINE N DIRECTORY` subcommand) so neither engine's heap colours the other's.
extension BenchRun {
    func runMemory() throws {
        progress("W10 resident memory, each engine in its own process")
        #if os(Linux)
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        #else
        let executable = Bundle.main.executablePath ?? CommandLine.arguments[0]
        #endif
        var engines = nextTrellisFirst() ? ["trellis", "sqlite"] : ["sqlite", "trellis"]
        engines.insert("lmdb", at: lmdbPlace)
        var results: [String: MemoryChild.Result] = [:]
        for engine in engines {
            results[engine] = try MemoryChild.launch(
                executable: executable, engine: engine, count: n, directory: directory("w10-\(engine)"))
        }
        let (a, b, c) = (results["trellis"]!, results["sqlite"]!, results["lmdb"]!)
        checks.same("W10", "items loaded", trellis: a.count, sqlite: b.count)
        checks.same("W10", "sum of n1", trellis: a.n1Sum, sqlite: b.n1Sum)
        checks.lmdb("W10", "items loaded", c.count, sqlite: b.count)
        checks.lmdb("W10", "sum of n1", c.n1Sum, sqlite: b.n1Sum)
        checks.equal("W10", "Trellis sum of n1", a.n1Sum, expected: expectedN1Sum)
        let caveat = !TrellisStorage.isPersistent
        figures.add(
            "W10", "peak_bytes_per_object", "bytes", .lower, trellis: a.peakPerObject, sqlite: b.peakPerObject,
            lmdb: c.peakPerObject, caveat: caveat)
        figures.add(
            "W10", "resident_bytes_per_object", "bytes", .lower, trellis: a.residentPerObject,
            sqlite: b.residentPerObject, lmdb: c.residentPerObject, caveat: caveat)
    }
}

/// The child side of W10, and the parent's launcher for it.
enum MemoryChild {
    struct Result {
        var peakPerObject: Double
        var residentPerObject: Double
        var count: Int
        var n1Sum: Int64
    }

    /// Runs the child in its two phases: `build` writes the store to disk (each engine's own process, whose heap
    /// then goes away), `load` opens and reads it and reports. An in-memory store has nothing to build: its `load`
    /// fills it instead.
    static func launch(executable: String, engine: String, count: Int, directory: String) throws -> Result {
        let persistent = engine != "trellis" || TrellisStorage.isPersistent
        if persistent { _ = try run(executable, [engine, String(count), directory, "build"]) }
        let fields = try run(executable, [engine, String(count), directory, "load"])
        guard let peak = fields["peak"].flatMap(Double.init), let resident = fields["resident"].flatMap(Double.init),
            let n = fields["count"].flatMap(Int.init), let n1 = fields["n1"].flatMap(Int64.init)
        else { throw BenchFailure("W10 child for \(engine) printed \(fields)") }
        return Result(peakPerObject: peak, residentPerObject: resident, count: n, n1Sum: n1)
    }

    /// Runs `trellis-bench --w10-child ARGUMENTS…` and parses the `key=value` words it prints.
    private static func run(_ executable: String, _ arguments: [String]) throws -> [String: String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--w10-child"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchFailure(
                "W10 child \(arguments.joined(separator: " ")) failed (status \(process.terminationStatus)): \(output)")
        }
        var fields: [String: String] = [:]
        for pair in output.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        return fields
    }

    /// `--w10-child ENGINE N DIRECTORY build|load`. `build` writes N items to the store in DIRECTORY and compacts it;
    /// `load` opens it (an in-memory store: fills it), reads every item, and prints `peak=… resident=… count=… n1=…`.
    static func main(_ arguments: [String]) -> Int32 {
        guard arguments.count == 4, let n = Int(arguments[1]), n > 0, ["build", "load"].contains(arguments[3]) else {
            FileHandle.standardError.write(
                Data("usage: trellis-bench --w10-child trellis|sqlite|lmdb N DIRECTORY build|load\n".utf8))
            return 64
        }
        let directory = arguments[2]
        do {
            let make: () throws -> any BenchEngine
            let persistent: Bool
            switch arguments[0] {
            case "trellis":
                let model = try TrellisModel()
                make = { try TrellisEngine(directory: directory, model: model) }
                persistent = TrellisStorage.isPersistent
            case "sqlite":
                make = { try SQLiteEngine(directory: directory) }
                persistent = true
            case "lmdb":
                make = { try LMDBEngine(directory: directory) }
                persistent = true
            default:
                throw BenchFailure("unknown engine '\(arguments[0])'")
            }
            if arguments[3] == "build" {
                let builder = try make()
                try builder.insertGenerated(n)
                // A store at rest: Trellis loads from a checkpoint rather than replaying the import's record.
                _ = try builder.compact()
                try builder.close()
                print("built=\(n)")
            } else {
                let r = try load(make, count: n, fill: !persistent)
                print("peak=\(r.peakPerObject) resident=\(r.residentPerObject) count=\(r.count) n1=\(r.n1Sum)")
            }
            return 0
        } catch {
            FileHandle.standardError.write(Data("W10 child: \(error)\n".utf8))
            return 1
        }
    }

    /// Opens the store (filling it first when `fill`: an in-memory store, whose peak then includes the insert
    /// transaction), reads every item, and measures the growth of resident memory from before the open.
    private static func load(_ make: () throws -> any BenchEngine, count n: Int, fill: Bool) throws -> Result {
        ProcessMemory.settle()
        let base = ProcessMemory.current().resident
        let engine = try make()
        if fill { try engine.insertGenerated(n) }
        let summary = try engine.fetchAll()
        let peak = ProcessMemory.current().peak
        ProcessMemory.trimHeap()
        let resident = ProcessMemory.current().resident
        withExtendedLifetime(engine) {}
        return Result(
            peakPerObject: Double(peak - base) / Double(n), residentPerObject: Double(resident - base) / Double(n),
            count: summary.count, n1Sum: summary.n1Sum)
    }
}

/// A step that could not run, with what went wrong.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

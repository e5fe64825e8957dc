import Foundation

/// W10: each engine's resident memory with N items loaded, measured in a child process of its own (this same binary,
/// re-run with the hidden `--w10-child ENGINE N DIRECTORY` subcommand) so neither engine's heap colours the other's.
extension BenchRun {
    func runMemory() throws {
        progress("W10 resident memory, each engine in its own process")
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let engines = nextTrellisFirst() ? ["trellis", "sqlite"] : ["sqlite", "trellis"]
        var results: [String: MemoryChild.Result] = [:]
        for engine in engines {
            results[engine] = try MemoryChild.launch(
                executable: executable, engine: engine, count: n, directory: directory("w10-\(engine)"))
        }
        let (a, b) = (results["trellis"]!, results["sqlite"]!)
        checks.same("W10", "items loaded", trellis: a.count, sqlite: b.count)
        checks.same("W10", "sum of n1", trellis: a.n1Sum, sqlite: b.n1Sum)
        checks.equal("W10", "Trellis sum of n1", a.n1Sum, expected: expectedN1Sum)
        let caveat = !TrellisStorage.isPersistent
        figures.add(
            "W10", "peak_bytes_per_object", "bytes", .lower, trellis: a.peakPerObject, sqlite: b.peakPerObject,
            caveat: caveat)
        figures.add(
            "W10", "resident_bytes_per_object", "bytes", .lower, trellis: a.residentPerObject,
            sqlite: b.residentPerObject, caveat: caveat)
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

    static func launch(executable: String, engine: String, count: Int, directory: String) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--w10-child", engine, String(count), directory]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        var fields: [String: String] = [:]
        for pair in output.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        guard process.terminationStatus == 0, let peak = fields["peak"].flatMap(Double.init),
            let resident = fields["resident"].flatMap(Double.init), let n = fields["count"].flatMap(Int.init),
            let n1 = fields["n1"].flatMap(Int64.init)
        else {
            throw BenchFailure("W10 child for \(engine) failed (status \(process.terminationStatus)): \(output)")
        }
        return Result(peakPerObject: peak, residentPerObject: resident, count: n, n1Sum: n1)
    }

    /// `--w10-child ENGINE N DIRECTORY`: loads N items, prints `peak=… resident=… count=… n1=…`, exits.
    static func main(_ arguments: [String]) -> Int32 {
        guard arguments.count == 3, let n = Int(arguments[1]), n > 0 else {
            FileHandle.standardError.write(Data("usage: trellis-bench --w10-child trellis|sqlite N DIRECTORY\n".utf8))
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
            default:
                throw BenchFailure("unknown engine '\(arguments[0])'")
            }
            let r = try measure(make, count: n, persistent: persistent)
            print("peak=\(r.peakPerObject) resident=\(r.residentPerObject) count=\(r.count) n1=\(r.n1Sum)")
            return 0
        } catch {
            FileHandle.standardError.write(Data("W10 child: \(error)\n".utf8))
            return 1
        }
    }

    /// A store on disk is built and closed first, then measured while it is opened and fully read; an in-memory
    /// store is measured while it is filled (its peak then includes the insert transaction).
    private static func measure(_ make: () throws -> any BenchEngine, count n: Int, persistent: Bool) throws -> Result {
        if persistent {
            let builder = try make()
            try builder.insertGenerated(n)
            try builder.close()
        }
        ProcessMemory.settle()
        let base = ProcessMemory.current().resident
        let engine = try make()
        if !persistent { try engine.insertGenerated(n) }
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

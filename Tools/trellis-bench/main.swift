import Foundation

/// trellis-bench: the standard workload against Trellis and SQLite in one process run. See `Options.usage`.
enum BenchMain {
    static func run(_ arguments: [String]) -> Int32 {
        if arguments.first == "--w10-child" { return MemoryChild.main(Array(arguments.dropFirst())) }
        let options: Options
        do {
            options = try Options.parse(arguments)
        } catch {
            guard let message = error.message else {
                print(Options.usage)
                return 0
            }
            FileHandle.standardError.write(Data("trellis-bench: \(message)\n\n\(Options.usage)\n".utf8))
            return 64
        }
        return bench(options)
    }

    private static func bench(_ options: Options) -> Int32 {
        var template = Array("/tmp/trellis-bench-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            fail("cannot make a temp directory under /tmp")
            return 1
        }
        let root = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let machine = Machine.describe(tempDirectory: root)
        var runs: [FigureSet] = []
        var checks = Checks()
        let started = Measure.now()
        do {
            let model = try TrellisModel()
            for k in 1...options.repeats {
                if options.repeats > 1 { FileHandle.standardError.write(Data("run \(k) of \(options.repeats)\n".utf8)) }
                let directory = (root as NSString).appendingPathComponent("run\(k)")
                let run = BenchRun(options: options, root: directory, model: model)
                try run.run()
                runs.append(run.figures)
                checks.merge(run.checks)
                try? FileManager.default.removeItem(atPath: directory)
            }
        } catch {
            fail("a step failed: \(error)")
            return 1
        }
        let figures = FigureSet.medians(runs)
        print(Report.table(figures, machine: machine, options: options, caveat: TrellisStorage.caveat))
        let seconds = Double(Measure.now() - started) / 1e9
        print("\(checks.passed) checks passed, \(checks.failures.count) failed; \(Report.format(seconds)) s in all")
        if let path = options.jsonPath {
            do {
                try Report.json(figures, machine: machine, scale: options.scale).write(
                    toFile: path, atomically: true, encoding: .utf8)
            } catch {
                fail("cannot write \(path): \(error)")
                return 1
            }
        }
        guard checks.failures.isEmpty else {
            fail("the engines disagree, so these figures mean nothing:\n  " + checks.failures.joined(separator: "\n  "))
            return 1
        }
        return 0
    }

    private static func fail(_ message: String) {
        FileHandle.standardError.write(Data("trellis-bench: \(message)\n".utf8))
    }
}

exit(BenchMain.run(Array(CommandLine.arguments.dropFirst())))

import Dispatch
import Foundation
import Synchronization

/// W7: a reader thread loops over `count(Item where flag)` and point lookups while the writer runs W4 again.
extension BenchRun {
    func runReadWhileWrite(_ t: TrellisEngine, _ s: SQLiteEngine, _ l: LMDBEngine) throws {
        progress("W7 reader while the writer updates \(n) items")
        _ = try all(t, s, l) { try $0.setDurability(.perCommit) }
        let flagged = items[0..<n].reduce(0) { $0 + ($1.flag ? 1 : 0) }
        let ids = StepRandom.readerIDs(count: 4096, itemCount: n)
        let results = try all(t, s, l) { engine in try ReadWhileWrite.run(engine, ids: ids) }
        for (name, r) in [("Trellis", results.trellis), ("SQLite", results.sqlite), ("LMDB", results.lmdb)] {
            checks.expect("W7", r.error == nil, "\(name) reader failed: \(r.error ?? "")")
            checks.expect("W7", !r.lookupMicros.isEmpty, "\(name) reader made no lookup during the write")
            checks.expect("W7", r.badLookups == 0, "\(name) reader missed \(r.badLookups) lookups")
            checks.expect(
                "W7", r.counts.allSatisfy { $0 == flagged },
                "\(name) reader counted \(Set(r.counts).sorted()) flagged items, expected \(flagged)")
        }
        let (a, b, c) = results
        figures.add(
            "W7", "writer_ms", "ms", .lower, trellis: a.writerMS, sqlite: b.writerMS, lmdb: c.writerMS,
            caveat: t.caveat != nil)
        for (metric, q) in [("lookup_p50_us", 0.5), ("lookup_p99_us", 0.99), ("lookup_max_us", 1.0)] {
            figures.add(
                "W7", metric, "µs", .lower, trellis: Measure.quantile(a.lookupMicros, q),
                sqlite: Measure.quantile(b.lookupMicros, q), lmdb: Measure.quantile(c.lookupMicros, q))
        }
        for (metric, q) in [("count_p50_us", 0.5), ("count_max_us", 1.0)] {
            figures.add(
                "W7", metric, "µs", .lower, trellis: Measure.quantile(a.countMicros, q),
                sqlite: Measure.quantile(b.countMicros, q), lmdb: Measure.quantile(c.countMicros, q))
        }
        let sums = try all(t, s, l) { try $0.fetchAll() }
        checks.close("W7", "sum of score after the write", trellis: sums.trellis.scoreSum, sqlite: sums.sqlite.scoreSum)
        checks.lmdbClose("W7", "sum of score after the write", sums.lmdb.scoreSum, sqlite: sums.sqlite.scoreSum)
    }
}

/// The reader's samples during one writer run.
struct ReadWhileWrite {
    var writerMS = 0.0
    var lookupMicros: [Double] = []
    var countMicros: [Double] = []
    /// The values the count queries returned (all must equal the flagged count: W4 changes no flag).
    var counts: [Int] = []
    var badLookups = 0
    var error: String?

    /// Starts the reader, waits until it has warmed up, runs the writer, then keeps the samples that overlap the
    /// write.
    static func run(_ engine: any BenchEngine, ids: [Int64]) throws -> ReadWhileWrite {
        let control = ReaderControl()
        let factory = engine.readerFactory()
        let thread = Thread { control.loop(factory, ids: ids) }
        thread.stackSize = 1 << 20
        thread.start()
        control.ready.wait()
        let start = Measure.now()
        let writerError: (any Error)?
        do {
            try engine.incrementScores()
            writerError = nil
        } catch {
            writerError = error
        }
        let end = Measure.now()
        control.stop.store(true, ordering: .releasing)
        control.done.wait()
        if let writerError { throw writerError }
        var result = control.samples.locked { $0 }
        result.writerMS = Double(end - start) / 1e6
        result.keep(from: start, to: end)
        return result
    }

    /// Raw samples: (start, end) nanoseconds, and what each returned.
    var lookupSpans: [(UInt64, UInt64)] = []
    var countSpans: [(UInt64, UInt64, Int)] = []

    private mutating func keep(from start: UInt64, to end: UInt64) {
        lookupMicros = lookupSpans.filter { $0.1 >= start && $0.0 <= end }.map { Double($0.1 - $0.0) / 1000 }
        let during = countSpans.filter { $0.1 >= start && $0.0 <= end }
        countMicros = during.map { Double($0.1 - $0.0) / 1000 }
        counts = during.map(\.2)
    }
}

/// Shared between the writer (this thread) and the reader thread: a stop flag, two signals and the samples.
final class ReaderControl: Sendable {
    let stop = Atomic<Bool>(false)
    let ready = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    let samples = Mutex(ReadWhileWrite())

    func loop(_ factory: () throws -> any ReadProbe, ids: [Int64]) {
        var out = ReadWhileWrite()
        out.lookupSpans.reserveCapacity(1 << 16)
        var signalled = false
        do {
            let probe = try factory()
            var next = 0
            while !stop.load(ordering: .acquiring) {
                let t0 = Measure.now()
                let count = try probe.countFlagged()
                out.countSpans.append((t0, Measure.now(), count))
                for _ in 0..<64 {
                    let t1 = Measure.now()
                    let length = try probe.titleLength(id: ids[next])
                    out.lookupSpans.append((t1, Measure.now()))
                    if length <= 0 { out.badLookups += 1 }
                    next = (next + 1) % ids.count
                }
                if !signalled {
                    signalled = true
                    ready.signal()
                }
            }
        } catch {
            out.error = "\(error)"
        }
        if !signalled { ready.signal() }
        samples.locked { [out] in $0 = out }
        done.signal()
    }
}

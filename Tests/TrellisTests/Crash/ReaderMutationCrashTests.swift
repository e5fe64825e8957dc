import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Matrix case 20, the deterministic part (the fuzzer is `Fuzz/run-fuzz.sh`): the manifest, checkpoint and segment
/// readers fed thousands of seeded mutations of real files never crash, hang or over-allocate; an open that
/// succeeds yields a prefix of the committed transactions, and any lost record shows in verify.
@Suite struct ReaderMutationCrashTests {
    typealias X = CrashExpectations

    static let commits = 30

    /// One mutation of `bytes`, chosen by `random`.
    static func mutate(_ bytes: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
        guard !bytes.isEmpty else { return [UInt8(truncatingIfNeeded: random.next())] }
        let at = Int(random.next() % UInt64(bytes.count))
        let span = 1 + Int(random.next() % 64)
        switch random.next() % 7 {
        case 0: return ByteMutators.truncate(bytes, to: at)
        case 1:
            var out = bytes
            for _ in 0..<(1 + random.next() % 8) {
                out = ByteMutators.flipBit(out, Int(random.next() % UInt64(out.count * 8)))
            }
            return out
        case 2: return ByteMutators.zero(bytes, at..<(at + span))
        case 3: return ByteMutators.garble(bytes, at..<(at + span), seed: random.next())
        case 4:
            // A length-like field: a huge value, zero, or one off, at an aligned offset.
            let field = at & ~3
            guard field + 4 <= bytes.count else { return bytes }
            let values: [UInt32] = [
                .max, 0x7fff_ffff, 0, ByteMutators.u32(bytes, field) &+ 1, ByteMutators.u32(bytes, field) &- 1,
            ]
            return ByteMutators.setU32(bytes, at: field, values[Int(random.next() % 5)])
        case 5:
            return bytes
                + ByteMutators.garble([UInt8](repeating: 0, count: span * 8), 0..<(span * 8), seed: random.next())
        default:
            // A chunk duplicated further on (stale frames, repeated records).
            let from = Int(random.next() % UInt64(bytes.count))
            return Array(bytes.prefix(at) + bytes[from..<min(bytes.count, from + span * 16)] + bytes.dropFirst(at))
        }
    }

    @Test("20: thousands of seeded mutations of the manifest, checkpoint and segments never crash the readers")
    func seededMutationsOfEveryStoreFileNeverCrashTheReadersAndNeverPassAsData() throws {
        let disk = try X.store(commits: Self.commits, segmentBytes: 1_500, compactEvery: 20)
        let names = disk.names().filter { $0 != JournalFormat.lockName }
        #expect(names.contains { $0.hasPrefix("checkpoint-") } && names.filter { $0.hasSuffix(".trj") }.count >= 2)
        var random = SeededRandom(seed: 20)
        var (refused, shortened, complete) = (0, 0, 0)
        for round in 0..<(X.long ? 20_000 : 2_000) {
            let name = names[Int(random.next() % UInt64(names.count))]
            let copy = disk.copy()
            copy.setContents(X.path(name), Self.mutate(disk.contents(X.path(name))!, &random))
            let context = "round \(round), \(name)"
            copy.resetLargestRead()
            let problems = (try? X.problems(copy)) ?? [JournalProblem(.header, file: name, offset: 0, "unreadable")]
            do {
                let store = try X.open(copy)
                let k = X.expectPrefix(store.snapshot, acknowledged: 0, context)
                try store.close()
                if k < Self.commits {
                    shortened += 1
                    // Records were lost: verify must have said so (a torn tail at least).
                    #expect(!problems.isEmpty, "\(context): \(k) of \(Self.commits) commits and no problem reported")
                } else {
                    complete += 1
                }
            } catch let error as TrellisError {
                refused += 1
                #expect([.corrupt, .schemaMismatch, .io].contains(error.code), "\(context): \(error)")
                #expect(!problems.isEmpty, "\(context): the open refused, but verify found nothing")
            }
            #expect(copy.largestRead <= 1 << 20, "\(context): read \(copy.largestRead) bytes at once")
            if round % 10 == 0 { _ = try? X.open(copy.copy(), recovery: .salvage).close() }
        }
        #expect(refused > 100 && complete > 20)
        print("crash suite, case 20: \(refused) refused, \(shortened) recovered a shorter prefix, \(complete) whole")
    }
}

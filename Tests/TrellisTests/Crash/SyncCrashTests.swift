import Foundation
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Matrix cases 8, 9 and 10 (harness F): power cuts at every sync, at every directory change, and with unsynced
/// writes kept in part, torn or garbled. Every acknowledged commit survives each of them.
@Suite struct SyncCrashTests {
    typealias X = CrashExpectations

    static let driver = CrashDriver(commits: X.long ? 120 : 40, segmentBytes: 4_096, compactEvery: 15)

    @Test("8: a crash after the Nth sync, for every N, dropping unsynced data, keeps every acknowledged commit")
    func crashAfterEverySyncDroppingUnsyncedDataKeepsEveryAcknowledgedCommit() throws {
        let syncs = Self.driver.cleanRun().events.filter { $0.operation == .sync || $0.operation == .syncDirectory }
        #expect(syncs.count > Self.driver.commits)
        for n in 0...syncs.count {
            let disk = SimulatedFileLayer()
            // Sync N+1 and every one after it fail: nothing written after the Nth sync becomes durable.
            disk.inject(.init([.sync, .syncDirectory], nth: n + 1, persistent: true))
            let acknowledged = Self.driver.drive(disk)
            let after = disk.crash(.init(data: .dropUnsynced, keepUnsyncedEntries: false))
            try CrashDriver.expectRecovery(after, acknowledged: acknowledged, "after sync \(n)")
        }
    }

    @Test(
        "9: a crash that forgets files created or renamed since the last directory sync keeps every acknowledged commit"
    )
    func crashForgettingUnsyncedDirectoryEntriesKeepsEveryAcknowledgedCommit() throws {
        let events = Self.driver.cleanRun().events
        let entryChanges: Set<SimulatedFileLayer.Operation> = [.create, .rename, .remove, .mkdir]
        // Stop right after each change to a directory (and a little later), or after every operation in long mode.
        let stops = Set(
            events.indices.flatMap { i in
                X.long || entryChanges.contains(events[i].operation) ? [i + 1, i + 2, i + 4] : []
            }
        ).sorted()
        var forgotten = 0
        for stop in stops where stop <= events.count {
            let disk = SimulatedFileLayer()
            disk.halt(afterOperations: stop)
            let acknowledged = Self.driver.drive(disk)
            let names = Set(disk.names())
            let after = disk.crash(.init(data: .keepUnsynced, keepUnsyncedEntries: false))
            if Set(after.names()) != names { forgotten += 1 }
            try CrashDriver.expectRecovery(after, acknowledged: acknowledged, "stop at \(stop)")
        }
        #expect(forgotten > 10, "the crashes forgot directory entries only \(forgotten) times")
    }

    /// The three ways a crash keeps unsynced writes in part.
    enum PartialWrites: String, CaseIterable, Sendable {
        case keepRandomSectors, tearUnsynced, garbleUnsyncedBytes

        func policy(seed: UInt64) -> SimulatedFileLayer.CrashPolicy.Data {
            switch self {
            case .keepRandomSectors: .keepRandomSectors(seed: seed)
            case .tearUnsynced: .tearUnsynced(seed: seed)
            case .garbleUnsyncedBytes: .garbleUnsyncedBytes(seed: seed)
            }
        }
    }

    @Test(
        "10: a crash that keeps a random part of the unsynced writes, tears them or garbles them keeps every acknowledged commit",
        arguments: PartialWrites.allCases)
    func crashKeepingTearingOrGarblingUnsyncedWritesKeepsEveryAcknowledgedCommit(kind: PartialWrites) throws {
        let total = Self.driver.cleanRun().operationCount
        // One seeded sequence a kind, so that the three run side by side.
        var random = SeededRandom(seed: 10 + UInt64(PartialWrites.allCases.firstIndex(of: kind)!) * 1_000)
        var rotted = 0
        for round in 0..<(X.long ? 500 : 100) {
            let policy = kind.policy(seed: random.next())
            let disk = SimulatedFileLayer()
            disk.halt(afterOperations: 1 + Int(random.next() % UInt64(total)))
            let acknowledged = Self.driver.drive(disk)
            let after = disk.crash(.init(data: policy, keepUnsyncedEntries: random.next() % 2 == 0))
            // A sector of random bytes over a whole record that was never synced is, byte for byte, what rot of a
            // synced one looks like (journal-format.md, Recovery step 4): no tear shows. It is refused as rot rather
            // than dropped, and salvage still keeps every acknowledged commit (the record held none).
            if kind == .garbleUnsyncedBytes, after.exists(X.path(JournalFormat.manifestName)).exists,
                try X.problems(after).contains(where: { $0.kind == .rot })
            {
                rotted += 1
                #expect(throws: TrellisError.self, "round \(round)") { try X.open(after).close() }
                let salvaged = try X.open(after, recovery: .salvage)
                X.expectPrefix(salvaged.snapshot, acknowledged: acknowledged, "round \(round), rot salvaged")
                try salvaged.close()
                continue
            }
            try CrashDriver.expectRecovery(after, acknowledged: acknowledged, "round \(round), \(policy)")
        }
        if kind == .garbleUnsyncedBytes {
            print("crash suite, case 10: \(rotted) garbled unsynced records refused as rot and salvaged")
        }
    }

    @Test("10: a garbled sector that also holds synced bytes is never read as valid data")
    func garbledSectorOverSyncedBytesIsDetectedOrDropped() throws {
        // A disk that harms the synced bytes sharing a sector with an unsynced write breaks the "acknowledged means
        // durable" promise of any log that is not sector-padded; what Trellis still owes is never to serve damage.
        let total = Self.driver.cleanRun().operationCount
        var random = SeededRandom(seed: 11)
        for _ in 0..<(X.long ? 500 : 50) {
            let disk = SimulatedFileLayer()
            disk.halt(afterOperations: 1 + Int(random.next() % UInt64(total)))
            Self.driver.drive(disk)
            let after = disk.crash(.init(data: .garbleRandomSector(seed: random.next()), keepUnsyncedEntries: true))
            do {
                let store = try X.open(after)
                X.expectPrefix(store.snapshot, acknowledged: 0)
                try store.close()
            } catch let error as TrellisError {
                #expect(error.code == .corrupt && error.message.contains(".trj at offset"), "\(error)")
            }
        }
    }
}

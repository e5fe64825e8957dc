import Foundation
import Synchronization
import Testing
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Replay equals live: what a reopened store recovers is, object for object, what the live store held.
@Suite struct JournalReplayTests {
    @Test(arguments: 0..<100)
    func reopenedGraphEqualsLiveAfterRandomWorkloadWithCompactions(seed: Int) throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open()
        var random = SeededRandom(seed: UInt64(seed) &* 7919)
        try JournalWorkload.run(store, seed: UInt64(seed), commits: 25) { _ in
            if random.next() % 10 == 0 { try store.compact() }
        }
        let live = store.snapshot
        let compactions = store.journal!.compactionCount
        #expect(live.sequence > 15)
        try store.close()
        let reopened = try disk.open()
        defer { try? reopened.close() }
        #expect(reopened.recoveryReport?.checkpointSequence ?? 0 > 0 || compactions == 0)
        #expect(GraphEquality.differences(live, reopened.snapshot) == [])
        #expect(reopened.snapshot.invariantViolations() == [])
        #expect(reopened.recoveryReport?.droppedBytes == 0)
        // IDs are never reused: the next insert gets a serial above every one ever allocated.
        var tx = reopened.transaction()
        let id = try tx.insert("Tag", ["label": "fresh"])
        #expect(id.serial > live.maxSerials[Int(id.entity)])
    }

    /// A commit of many inserts (or updates) encodes them for the journal as background work beside applying them;
    /// with other changes in the same commit, the record still replays to the live graph.
    @Test func commitsWhoseSectionsAreEncodedAheadReplayEqual() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open()
        try JournalWorkload.run(store, seed: 77, commits: 6) { _ in }
        let schema = store.schema
        var setup = store.transaction()
        let tags = [try setup.insert("Tag", ["label": "first"]), try setup.insert("Tag", ["label": "second"])]
        let items = [try setup.insert("Item", ["title": "holder", "score": 1, "count": 2])]
        try store.commit(setup)
        var tx = store.transaction()
        let count = EncodingAhead.minimumChanges + 37
        var fresh: [ObjectID] = []
        for k in 0..<count { fresh.append(try tx.insert("Tag", ["label": .string("bulk tag \(k)")])) }
        try tx.set(tags[0], "label", "renamed")
        try tx.link(items[0], "tags", fresh[5])
        try tx.delete(tags[1])
        let commit = try store.commit(tx)
        #expect(commit.changes.inserts.count == count)
        #expect(commit.changes.updates.count == 1 && commit.changes.deletes.count >= 1)
        // Then as many updates, encoded ahead the same way, with an insert and a delete beside them.
        var edit = store.transaction()
        for (k, id) in fresh.enumerated() { try edit.set(id, "label", .string("relabelled \(k)")) }
        _ = try edit.insert("Tag", ["label": "one more"])
        try edit.delete(fresh[0])
        let second = try store.commit(edit)
        #expect(second.changes.updates.count == count)
        // Then as many deletes, with a link made in the same commit (the edits section goes with them).
        var removal = store.transaction()
        for id in fresh.dropFirst().dropLast() { try removal.delete(id) }
        try removal.link(items[0], "tags", fresh[count - 1])
        let third = try store.commit(removal)
        #expect(third.changes.deletes.count == count - 2 && third.changes.edits.count == 1)
        let live = store.snapshot
        try store.close()
        let reopened = try disk.open()
        defer { try? reopened.close() }
        #expect(GraphEquality.differences(live, reopened.snapshot) == [])
        #expect(
            reopened.snapshot.value(fresh[count - 1], try schema.attribute("Tag", "label"))
                == .string("relabelled \(count - 1)"))
    }

    /// A record of a megabyte or more is written as header, payload and padding one after the other; the records
    /// around it, and a store reopened after it, read as if it had been written whole.
    @Test func aRecordWrittenInPartsReadsBackLikeAnyOther() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open()
        try store.write { tx in _ = try tx.insert("Tag", ["label": "before"]) }
        var tx = store.transaction()
        let text = String(repeating: "long label text ", count: 20)
        for k in 0..<4_000 { _ = try tx.insert("Tag", ["label": .string("\(k) \(text)")]) }
        let big = try store.commit(tx)
        let payload = ChangeSetCodec.encode(big.changes, schema: store.schema)
        #expect(payload.count >= Journal.writtenInParts)
        #expect(payload.count % JournalFormat.alignment != 0)  // so the padding is written too
        try store.write { tx in _ = try tx.insert("Tag", ["label": "after"]) }
        let live = store.snapshot
        try store.close()
        let reopened = try disk.open()
        defer { try? reopened.close() }
        #expect(GraphEquality.differences(live, reopened.snapshot) == [])
        #expect(reopened.recoveryReport?.droppedBytes == 0)
        #expect(reopened.snapshot.count(entity: try store.schema.entityNumber("Tag")) == 4_002)
    }

    @Test(arguments: 0..<20)
    func crashDroppingUnsyncedDataKeepsEveryAcknowledgedCommit(seed: Int) throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open()
        var random = SeededRandom(seed: UInt64(seed))
        try JournalWorkload.run(store, seed: UInt64(seed) + 1000, commits: 25) { _ in
            if random.next() % 12 == 0 { try store.compact() }
        }
        let acknowledged = store.snapshot
        // No close: the machine loses power with the store open.
        let survivor = disk.crash(.init(data: .dropUnsynced, keepUnsyncedEntries: false))
        let reopened = try survivor.open()
        defer { try? reopened.close() }
        #expect(GraphEquality.differences(acknowledged, reopened.snapshot) == [])
        try? store.close()
    }

    @Test func relaxedDurabilityRecoversAPrefixAfterACrash() throws {
        let disk = SimulatedFileLayer()
        let store = try disk.open(JournalWorkload.schema, disk.options(.none))
        let versions = Mutex<[UInt64: Graph]>([0: store.snapshot])
        let token = store.observe { commit in versions.locked { $0[commit.sequence] = commit.snapshot } }
        try JournalWorkload.run(store, seed: 5, commits: 30)
        token.cancel()
        let survivor = disk.crash(.init(data: .tearUnsynced(seed: 3)))
        let reopened = try survivor.open()
        let recovered = reopened.snapshot
        let expected = try #require(versions.locked { $0[recovered.sequence] })
        #expect(GraphEquality.differences(expected, recovered) == [])
        try reopened.close()
        try? store.close()
    }

    @Test func realDirectoryStoreReopensEqualAfterCompactionAndRotation() throws {
        let temporary = TemporaryDirectory()
        var options = StoreOptions(compaction: .manual, segmentBytes: 4096)
        options.durability = .perCommit
        let store = try Store(directory: temporary.store, schema: JournalWorkload.schema, options: options)
        try JournalWorkload.run(store, seed: 42, commits: 120) { n in
            if n == 60 { try store.compact() }
        }
        let live = store.snapshot
        try store.close()
        let attributes = try FileManager.default.attributesOfItem(atPath: temporary.store.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        let reopened = try Store(directory: temporary.store, schema: JournalWorkload.schema, options: options)
        #expect(GraphEquality.differences(live, reopened.snapshot) == [])
        #expect(reopened.recoveryReport?.checkpointSequence ?? 0 > 0)
        try reopened.close()
        let verification = try JournalReader(directory: temporary.store).verify()
        #expect(verification.problems == [])
        #expect(verification.lastSequence == live.sequence)
    }
}

import Foundation
import Testing

@testable import Trellis

@Suite struct VersionReclaimerTests {
    /// Each commit hands the version it replaced to the reclaimer, which keeps at most `limit` of them and lets them
    /// all go on its own queue after the grace period: a reader dropping the version it read is not the last holder,
    /// so it never pays for freeing what a big commit replaced.
    @Test func replacedVersionsAreKeptForTheGracePeriodThenReleased() async throws {
        let store = Store(schema: try Fixtures.outlineSchema())
        #expect(store.reclaimer.keptCount == 0)
        let root = try Fixtures.folderTree(in: store, fanOut: 10, depth: 4)
        let beforeDelete = store.snapshot
        try store.write { tx in try tx.delete(root) }
        #expect(store.reclaimer.keptCount == 2)
        #expect(store.reclaimer.keptVersions.last == beforeDelete.sequence)

        for i in 0..<100 { try store.write { tx in try tx.insert("Folder", ["name": .string("f\(i)")]) } }
        #expect(store.reclaimer.keptCount == VersionReclaimer.limit)
        #expect(store.reclaimer.keptVersions.last == store.snapshot.sequence - 1)
        // 102 replaced versions: 64 kept, 38 pushed out, of which one batch of 32 went to the queue at once.
        #expect(store.reclaimer.overflowCount == 102 - VersionReclaimer.limit - VersionReclaimer.overflowBatch)

        try await Task.sleep(for: .seconds(VersionReclaimer.grace * 2 + 0.5))
        #expect(store.reclaimer.keptCount == 0)
        #expect(store.reclaimer.overflowCount == 0)
    }
}

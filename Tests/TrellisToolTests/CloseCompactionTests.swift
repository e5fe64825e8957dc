import Foundation
import Testing
import Trellis

/// With `StoreOptions.Compaction.atClose`, a store closed after a long journal is found by another process (`trellis info`, then
/// `trellis verify`) as one checkpoint of the last commit and a journal without records: the next launch loads the
/// checkpoint instead of replaying. A store closed after a short journal keeps its records.
@Suite struct CloseCompactionTests {
    static let schema = try! Schema([EntityDescription("Page", attributes: [.init("text", .string)])])

    /// Commits `commits` transactions of 20 pages of 1,000 random letters (about 12 KiB of journal each, since zlib
    /// cannot shrink them much) with compaction at close, then closes the store; returns the last sequence.
    static func writeAndClose(_ directory: URL, commits: Int) throws -> UInt64 {
        let store = try Store(
            directory: directory, schema: schema, options: StoreOptions(compaction: .init(atClose: true)))
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        var random = SystemRandomNumberGenerator()
        for _ in 0..<commits {
            try store.write { tx in
                for _ in 0..<20 {
                    let text = String((0..<1_000).map { _ in letters.randomElement(using: &random)! })
                    try tx.insert("Page", ["text": .string(text)])
                }
            }
        }
        let last = store.snapshot.sequence
        try store.close()
        return last
    }

    /// 40 commits (about 480 KiB of journal) pass the close's 256 KiB minimum; 4 commits do not.
    @Test(arguments: [40, 4])
    func aCleanCloseLeavesACheckpointAfterALongJournalAndTheRecordsAfterAShortOne(commits: Int) throws {
        let directory = Fixture.newDirectory()
        defer { Fixture.cleanUp(directory) }
        let last = try Self.writeAndClose(directory, commits: commits)

        let info = try Tool.run(["info", directory.path, "--json"])
        #expect(info.status == 0, "\(info)")
        let json = try info.json()
        #expect(json["lastSequence"] as? Int == Int(last))
        #expect(json["objectCounts"] as? [String: Int] == ["Page": commits * 20])
        if commits == 40 {
            let checkpoint = try #require(json["checkpoint"] as? [String: Any], "\(info)")
            #expect(checkpoint["sequence"] as? Int == Int(last))
            #expect(json["records"] as? Int == 0)
        } else {
            #expect(json["checkpoint"] is NSNull)
            #expect(json["records"] as? Int == Int(last))
        }
        let verify = try Tool.run(["verify", directory.path])
        #expect(verify.status == 0, "\(verify)")
    }
}

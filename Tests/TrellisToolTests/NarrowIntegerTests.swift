import Foundation
import Testing
import Trellis

/// Integer columns of leaves loaded from a checkpoint hold 32-bit offsets when their values span less than 2^32
/// (issue 21, W10): what another process reads is every value as written, before and after writes that fit the
/// narrow form, writes that do not, inserts into a loaded leaf and deletes.
@Suite struct NarrowIntegerTests {
    static let schema: Schema = {
        do {
            return try Schema([
                EntityDescription(
                    "Row",
                    attributes: [
                        AttributeDescription("small", .int), AttributeDescription("wide", .int),
                        AttributeDescription("edge", .int), AttributeDescription("maybe", .int, optional: true),
                    ])
            ])
        } catch { fatalError("schema: \(error)") }
    }()

    /// The values of row `i` (0-based): `small` spans 1,043; `wide` reaches both ends of `Int64`; `edge` spans
    /// exactly 2^32 - 1, the widest span the narrow form holds; `maybe` is null for every third row.
    static func values(_ i: Int) -> [String: Value] {
        let i64 = Int64(i)
        return [
            "small": .int(1_000 + i64 * 7),
            "wide": .int(i % 2 == 0 ? Int64.min + i64 : Int64.max - i64),
            "edge": .int(i % 2 == 0 ? -5 : -5 + Int64(UInt32.max)),
            "maybe": i % 3 == 0 ? .null : .int(-1_000_000 * i64),
        ]
    }

    /// What `trellis find --json` prints for every `Row`, as `[id: [attribute: Int64 or nil]]`, from another process.
    static func readInAnotherProcess(_ store: URL) throws -> [String: [String: Int64?]] {
        let result = try Tool.run(["find", store.path, "Row", "--json"])
        #expect(result.status == 0, "\(result)")
        let objects = try #require(try result.json()["objects"] as? [[String: Any]], "\(result)")
        var rows: [String: [String: Int64?]] = [:]
        for object in objects {
            let id = try #require(object["id"] as? String)
            let values = try #require(object["values"] as? [String: Any])
            rows[id] = values.mapValues { ($0 as? NSNumber)?.int64Value }
        }
        return rows
    }

    /// The IDs whose values differ between `a` and `b` (a short failure message rather than both maps).
    static func differences(_ a: [String: [String: Int64?]], _ b: [String: [String: Int64?]]) -> [String] {
        Set(a.keys).union(b.keys).filter { a[$0] != b[$0] }.sorted()
    }

    static func expected(_ model: [ObjectID: [String: Value]]) -> [String: [String: Int64?]] {
        var rows: [String: [String: Int64?]] = [:]
        for (id, values) in model {
            rows["Row#\(id.serial)"] = values.mapValues { value -> Int64? in
                if case .int(let n) = value { return n }
                return nil
            }
        }
        return rows
    }

    /// The IDs `find --where condition` prints, from another process.
    static func ids(_ store: URL, _ condition: String) throws -> Set<String> {
        let result = try Tool.run(["find", store.path, "Row", "--where", condition, "--json"])
        #expect(result.status == 0, "\(condition): \(result)")
        let objects = try #require(try result.json()["objects"] as? [[String: Any]], "\(result)")
        return Set(objects.compactMap { $0["id"] as? String })
    }

    @Test func everyValueReadsBackInAnotherProcessThroughNarrowLeavesAndTheWritesAfterThem() throws {
        let directory = Fixture.newDirectory()
        defer { Fixture.cleanUp(directory) }
        let options = StoreOptions(compaction: .manual)
        var model: [ObjectID: [String: Value]] = [:]
        // 150 rows: two full leaves and a partial third.
        var store = try Store(directory: directory, schema: Self.schema, options: options)
        try store.write { tx in
            for i in 0..<150 { model[try tx.insert("Row", Self.values(i))] = Self.values(i) }
        }
        try store.compact()
        try store.close()
        #expect(Self.differences(try Self.readInAnotherProcess(directory), Self.expected(model)) == [])
        #expect(try Self.ids(directory, "edge > 0").count == 75)
        let large = model.filter { if case .int(let n) = $0.value["small"] { n >= 2000 } else { false } }
        #expect(large.count == 7)
        #expect(try Self.ids(directory, "small >= 2000") == Set(large.keys.map { "Row#\($0.serial)" }))

        // Reopened from the checkpoint (narrow leaves): a write that fits, one that does not, inserts into the
        // partial leaf and deletes; then read by another process from the journal's replay, and after a compaction.
        store = try Store(directory: directory, schema: Self.schema, options: options)
        let ids = model.keys.sorted { $0.serial < $1.serial }
        try store.write { tx in
            try tx.set(ids[5], "small", .int(Int64.max))
            try tx.set(ids[7], "edge", .int(-5))
            try tx.set(ids[7], "maybe", .int(-1))
            try tx.set(ids[70], "wide", .int(0))
            for id in [ids[9], ids[140]] {
                try tx.delete(id)
                model[id] = nil
            }
            for i in 150..<170 { model[try tx.insert("Row", Self.values(i))] = Self.values(i) }
        }
        model[ids[5]]!["small"] = .int(Int64.max)
        model[ids[7]]!["edge"] = .int(-5)
        model[ids[7]]!["maybe"] = .int(-1)
        model[ids[70]]!["wide"] = .int(0)
        try store.close()
        let replayed = try Self.readInAnotherProcess(directory)
        #expect(replayed.count == 168)
        #expect(Self.differences(replayed, Self.expected(model)) == [])

        store = try Store(directory: directory, schema: Self.schema, options: options)
        try store.compact()
        try store.close()
        #expect(Self.differences(try Self.readInAnotherProcess(directory), Self.expected(model)) == [])
        #expect(try Self.ids(directory, "small > 9000000000") == ["Row#\(ids[5].serial)"])
        #expect(try Self.ids(directory, "maybe == -1") == ["Row#\(ids[7].serial)"])
    }
}

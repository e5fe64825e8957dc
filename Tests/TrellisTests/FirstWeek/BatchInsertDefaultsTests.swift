import Foundation
import Testing
import Trellis

/// A note whose identity and creation time come from property initializers, as SwiftData models write them.
final class Jot: Model {
    @Attribute(.unique) var key = UUID()
    @Attribute var created = Date()
    @Attribute var kind = "note"
    @Attribute var text = ""
}

/// Issue 16, item 1: `store.batchInsert` filled attributes `fill` left alone from the schema's stored default, so
/// every row got the same UUID (a unique index then refused the batch) and the same date. Each row now gets its own,
/// as `init()` gives each object its own; constant initializers stay constant.
@Suite struct BatchInsertDefaultsTests {
    @Test func initializersComputedPerObjectAreComputedPerRow() throws {
        let store = try Store(models: [Jot.self])
        let before = Date()
        let result = try store.batchInsert(Jot.self, count: 5) { i, row in row[\.text] = "jot \(i)" }
        #expect(result.objects.count == 5)
        let snapshot = store.snapshot
        let keys = Set(try result.objects.map { try snapshot.value($0, "key") })
        #expect(keys.count == 5, "five objects, five UUIDs: \(keys)")
        let dates = try result.objects.map { id -> Date in
            guard case .date(let d)? = try snapshot.value(id, "created") else { return .distantPast }
            return d
        }
        #expect(dates.allSatisfy { $0 >= before && $0 <= Date() }, "\(dates)")
        #expect(Set(dates).count == 5, "each row's own Date(): \(dates)")
        #expect(try result.objects.allSatisfy { try snapshot.value($0, "kind") == "note" })
        #expect(try snapshot.value(result.objects[3], "text") == "jot 3")
    }
}

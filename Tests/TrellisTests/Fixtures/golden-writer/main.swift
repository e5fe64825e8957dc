import Foundation
import Trellis

// Writes a golden store with the build it is compiled into (see ../README.md): `golden-writer DIR`.
// Its schema and content are `GoldenStoreTests`' expectations; change neither once a store is checked in.

let v1 = try! Schema([
    EntityDescription(
        "Shelf", attributes: [AttributeDescription("name", .string)],
        relationships: [
            RelationshipDescription("books", to: "Book", inverse: "shelf", toMany: true, deleteRule: .cascade)
        ], indexes: [.unique("name")]),
    EntityDescription(
        "Book",
        attributes: [
            AttributeDescription("flag", .bool), AttributeDescription("i", .int),
            AttributeDescription("i8", .int8), AttributeDescription("i16", .int16),
            AttributeDescription("i32", .int32), AttributeDescription("i64", .int64),
            AttributeDescription("d", .double), AttributeDescription("f", .float),
            AttributeDescription("title", .string), AttributeDescription("published", .date),
            AttributeDescription("cover", .data, optional: true), AttributeDescription("uuid", .uuid),
            AttributeDescription("url", .url), AttributeDescription("price", .decimal),
        ],
        relationships: [RelationshipDescription("shelf", to: "Shelf", inverse: "books", deleteRule: .nullify)],
        indexes: [.on("title"), .on("i"), .on("published"), .unique("uuid")]),
])

/// Version 2: books gain `pinned` (default true) and an index on `i32`: one migration record.
let v2: Schema = {
    var entities = v1.entities
    entities[1].attributes.append(AttributeDescription("pinned", .bool, default: true))
    entities[1].indexes.append(.on("i32"))
    return try! Schema(entities)
}()

/// Book `n`'s values as first inserted.
func book(_ n: Int) -> [String: Value] {
    [
        "flag": .bool(n % 2 == 0), "i": .int(Int64(n) * 1_000_000_007), "i8": .int(Int64(n - 15)),
        "i16": .int(Int64(n * -300)), "i32": .int(Int64(n * 100_000)), "i64": .int(Int64.max - Int64(n)),
        "d": .double(Double(n) / 3), "f": .double(Double(n) * 0.25), "title": .string("book \(n) ✓"),
        "published": .date(Date(timeIntervalSince1970: 1_700_000_000 + Double(n) * 86_400.5)),
        "cover": n % 4 == 0 ? .null : .data(Data((0..<(n * 3)).map { UInt8(truncatingIfNeeded: $0 &* n) })),
        "uuid": .uuid(UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", n))!),
        "url": .url(URL(string: "https://example.com/book/\(n)?q=ü")!),
        "price": .decimal(Decimal(string: "\(n).25")!),
    ]
}

/// Transaction 1 inserts shelves 0…2 (serials 1…3); transaction n + 1 inserts book n (serial n) on shelf n % 3,
/// renames book n - 3 when n % 7 == 0, and deletes book n - 5 when n % 10 == 0.
func commit(_ n: Int, _ store: Store) throws {
    try store.write { tx in
        if n == 0 {
            for s in 0..<3 { _ = try tx.insert("Shelf", ["name": .string("shelf \(s)")]) }
            return
        }
        let id = try tx.insert("Book", book(n))
        try tx.link(id, "shelf", ObjectID(entity: 0, serial: UInt64(n % 3 + 1)))
        if n % 7 == 0 { try tx.set(ObjectID(entity: 1, serial: UInt64(n - 3)), "title", .string("renamed \(n - 3)")) }
        if n % 10 == 0 { try tx.delete(ObjectID(entity: 1, serial: UInt64(n - 5))) }
    }
}

let url = URL(fileURLWithPath: CommandLine.arguments[1])
let options = StoreOptions(compaction: .manual, segmentBytes: 4096)
let store = try Store(directory: url, schema: v1, options: options)
for n in 0...20 { try commit(n, store) }
try store.compact()  // a checkpoint of transactions 1…21
for n in 21...30 { try commit(n, store) }
try store.close()
// Reopening with v2 migrates (one record); then one more commit in v2.
let migrated = try Store(directory: url, schema: v2, options: options)
try migrated.write { tx in try tx.set(ObjectID(entity: 1, serial: 1), "pinned", .bool(false)) }
try migrated.close()
print("wrote \(url.path)")

import CLMDB
import Foundation

/// The third engine: LMDB mapped as its users map such a model. Items keyed by id (a fixed binary row), a dup-sorted
/// score index (score → id, keys ordered as the scores), folders keyed by id with a dup-sorted children index that
/// the cascade delete walks. Durable commits use LMDB's default flags; relaxed ones `MDB_NOSYNC` with a forced
/// `mdb_env_sync` at most a second apart (see RESULTS.md, "LMDB, the third engine").
final class LMDBEngine: BenchEngine {
    let name = "LMDB"
    let caveat: String? = nil
    let directory: String
    private var current: LMDBEnvironment?
    private var env: LMDBEnvironment { current! }
    /// The reused read transaction for the steps' reads on this thread.
    private var reader: LMDBReadTransaction?
    private var durability = Durability.perCommit
    /// When relaxed commits last reached the disk.
    private var lastSync: UInt64 = 0
    /// Keys and rows are built here: ids at 0 and 8, score keys at 16 and 24, the row from `rowOffset`.
    private let scratch = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 16)
    private static let rowOffset = 64
    /// The interval of relaxed durability's forced sync, in nanoseconds.
    private static let relaxedInterval: UInt64 = 1_000_000_000

    init(directory: String) throws {
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try openEnvironment()
    }

    deinit { scratch.deallocate() }

    private func openEnvironment() throws {
        current = try LMDBEnvironment(directory: directory, flags: durability == .relaxed ? UInt32(MDB_NOSYNC) : 0)
        reader = try LMDBReadTransaction(env)
        lastSync = Measure.now()
    }

    func setDurability(_ durability: Durability) throws {
        guard durability != self.durability else { return }
        if self.durability == .relaxed { try env.sync() }
        self.durability = durability
        try env.setNoSync(durability == .relaxed)
        lastSync = Measure.now()
    }

    /// A write transaction, then relaxed durability's sync when the last one is a second old.
    private func write(_ body: (OpaquePointer) throws -> Void) throws {
        try env.write(body)
        if durability == .relaxed {
            let now = Measure.now()
            if now &- lastSync >= Self.relaxedInterval {
                try env.sync()
                lastSync = now
            }
        }
    }

    // MARK: Items

    /// Puts one item and its score index entry. Ids arrive in ascending order, so the row is appended (full pages,
    /// as a bulk load would); an id below the last falls back to an ordinary put that refuses duplicates.
    private func put(_ item: ItemData, _ txn: OpaquePointer) throws {
        let e = env
        let row = scratch + Self.rowOffset
        let size = LMDBRow.encode(item, into: row)
        scratch.storeBytes(of: UInt64(bitPattern: item.id), as: UInt64.self)
        var key = MDB_val(mv_size: 8, mv_data: scratch)
        var data = MDB_val(mv_size: size, mv_data: row)
        var rc = mdb_put(txn, e.items, &key, &data, UInt32(MDB_APPEND))
        if rc == MDB_KEYEXIST { rc = mdb_put(txn, e.items, &key, &data, UInt32(MDB_NOOVERWRITE)) }
        try lmdbCheck(rc, "put item \(item.id)")
        (scratch + 16).storeBytes(of: LMDBRow.scoreKey(item.score), as: UInt64.self)
        var scoreKey = MDB_val(mv_size: 8, mv_data: scratch + 16)
        var id = MDB_val(mv_size: 8, mv_data: scratch)
        try lmdbCheck(mdb_put(txn, e.scores, &scoreKey, &id, 0), "put score of item \(item.id)")
    }

    func insertItems(_ items: ArraySlice<ItemData>) throws {
        try write { txn in
            for item in items { try put(item, txn) }
        }
    }

    func insertGenerated(_ count: Int) throws {
        try write { txn in
            var generator = ItemGenerator()
            for _ in 0..<count { try put(generator.next()!, txn) }
        }
    }

    func fetchAll() throws -> FetchSummary {
        try reader!.read { txn in
            try withLMDBCursor(txn, env.items) { cursor in
                var sum = FetchSummary()
                var key = MDB_val()
                var data = MDB_val()
                var rc = mdb_cursor_get(cursor, &key, &data, MDB_FIRST)
                while rc == MDB_SUCCESS {
                    let row = LMDBRow(data)
                    let title = row.title
                    let created = Date(timeIntervalSince1970: row.created)
                    sum.count += 1
                    sum.idSum &+= row.id
                    sum.titleBytes += title.utf8.count
                    sum.scoreSum += row.score
                    sum.flagged += row.flag ? 1 : 0
                    sum.createdSum += created.timeIntervalSince1970
                    sum.n1Sum &+= row.n(1)
                    sum.otherSum &+= row.n(2) &+ row.n(3) &+ row.n(4) &+ row.n(5)
                    rc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
                }
                try lmdbCheck(rc == MDB_NOTFOUND ? MDB_SUCCESS : rc, "fetch all")
                return sum
            }
        }
    }

    func lookupTitles(_ ids: [Int64]) throws -> LookupSummary {
        var sum = LookupSummary()
        let reader = self.reader!
        let items = env.items
        for id in ids {
            // A read transaction per fetch, as SQLite reads each statement in its own.
            let length = try reader.read { txn in try LMDBEngine.titleLength(txn, items, id, scratch) }
            if length >= 0 {
                sum.found += 1
                sum.titleBytes += length
            }
        }
        return sum
    }

    /// The UTF-8 length of the title of item `id` (read into a `String`, as the other engines do), -1 when missing.
    @inline(__always)
    static func titleLength(
        _ txn: OpaquePointer, _ items: MDB_dbi, _ id: Int64, _ scratch: UnsafeMutableRawPointer
    )
        throws -> Int
    {
        scratch.storeBytes(of: UInt64(bitPattern: id), as: UInt64.self)
        var key = MDB_val(mv_size: 8, mv_data: scratch)
        var data = MDB_val()
        let rc = mdb_get(txn, items, &key, &data)
        if rc == MDB_NOTFOUND { return -1 }
        try lmdbCheck(rc, "get item \(id)")
        return LMDBRow(data).title.utf8.count
    }

    /// Reads id and score from the index alone: its key is the score and its value the id, so the rows are not needed.
    func rangeQueries(_ ranges: [ScoreRange]) throws -> RangeSummary {
        var sum = RangeSummary()
        let scores = env.scores
        let key0 = scratch + 16
        for range in ranges {
            try reader!.read { txn in
                try withLMDBCursor(txn, scores) { cursor in
                    let upper = UInt64(bigEndian: LMDBRow.scoreKey(range.upper))
                    key0.storeBytes(of: LMDBRow.scoreKey(range.lower), as: UInt64.self)
                    var key = MDB_val(mv_size: 8, mv_data: key0)
                    var data = MDB_val()
                    var rc = mdb_cursor_get(cursor, &key, &data, MDB_SET_RANGE)
                    var last = -Double.infinity
                    while rc == MDB_SUCCESS {
                        let ordered = UInt64(bigEndian: key.mv_data.loadUnaligned(as: UInt64.self))
                        if ordered >= upper { break }
                        let score = LMDBRow.score(ordered: ordered)
                        sum.rows += 1
                        sum.idSum &+= data.mv_data.loadUnaligned(as: Int64.self)
                        sum.scoreSum += score
                        if score < last { sum.outOfOrder += 1 }
                        last = score
                        rc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
                    }
                    if rc != MDB_SUCCESS { try lmdbCheck(rc == MDB_NOTFOUND ? MDB_SUCCESS : rc, "range scan") }
                }
            }
        }
        return sum
    }

    /// The score index's data is the id: `rangeQueries` reads no rows already.
    func rangeQueriesIndexOnly(_ ranges: [ScoreRange]) throws -> RangeSummary { try rangeQueries(ranges) }

    /// Rewrites each row in place through the cursor (same size) and moves its index entry.
    func incrementScores() throws {
        let e = env
        let row = scratch + Self.rowOffset
        try write { txn in
            try withLMDBCursor(txn, e.items) { cursor in
                var key = MDB_val()
                var data = MDB_val()
                var rc = mdb_cursor_get(cursor, &key, &data, MDB_FIRST)
                while rc == MDB_SUCCESS {
                    let size = data.mv_size
                    row.copyMemory(from: data.mv_data, byteCount: size)
                    scratch.copyMemory(from: key.mv_data, byteCount: 8)
                    let old = LMDBRow.readScore(row)
                    LMDBRow.writeScore(old + 1, row)
                    var updated = MDB_val(mv_size: size, mv_data: row)
                    try lmdbCheck(mdb_cursor_put(cursor, &key, &updated, UInt32(MDB_CURRENT)), "update row")
                    var id = MDB_val(mv_size: 8, mv_data: scratch)
                    (scratch + 16).storeBytes(of: LMDBRow.scoreKey(old), as: UInt64.self)
                    var oldKey = MDB_val(mv_size: 8, mv_data: scratch + 16)
                    try lmdbCheck(mdb_del(txn, e.scores, &oldKey, &id), "delete old score")
                    (scratch + 24).storeBytes(of: LMDBRow.scoreKey(old + 1), as: UInt64.self)
                    var newKey = MDB_val(mv_size: 8, mv_data: scratch + 24)
                    try lmdbCheck(mdb_put(txn, e.scores, &newKey, &id, 0), "put new score")
                    rc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
                }
                try lmdbCheck(rc == MDB_NOTFOUND ? MDB_SUCCESS : rc, "update scan")
            }
        }
    }

    func insertEach(_ items: ArraySlice<ItemData>) throws {
        for item in items {
            try write { txn in try put(item, txn) }
        }
    }

    func itemCount() throws -> Int { try env.entries(env.items) }

    // MARK: Folders

    func buildFolderTree(fanOut: Int, depth: Int) throws {
        let e = env
        try write { txn in
            for folder in FolderTree(fanOut: fanOut, depth: depth) {
                let parent = UInt64(folder.parent ?? 0)
                scratch.storeBytes(of: UInt64(folder.id), as: UInt64.self)
                (scratch + 8).storeBytes(of: parent, as: UInt64.self)
                let row = scratch + Self.rowOffset
                row.storeBytes(of: parent, as: UInt64.self)
                var name = folder.name
                let size = name.withUTF8 { bytes in
                    (row + 8).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
                    return 8 + bytes.count
                }
                var key = MDB_val(mv_size: 8, mv_data: scratch)
                var data = MDB_val(mv_size: size, mv_data: row)
                try lmdbCheck(mdb_put(txn, e.folders, &key, &data, UInt32(MDB_APPEND)), "put folder \(folder.id)")
                guard parent != 0 else { continue }
                var parentKey = MDB_val(mv_size: 8, mv_data: scratch + 8)
                var child = MDB_val(mv_size: 8, mv_data: scratch)
                try lmdbCheck(mdb_put(txn, e.children, &parentKey, &child, 0), "put child \(folder.id)")
            }
        }
    }

    /// Deletes folder 1 and, walking the children index, everything below it.
    func deleteRootFolder() throws {
        let e = env
        try write { txn in
            try withLMDBCursor(txn, e.children) { cursor in
                var pending: [UInt64] = [1]
                // The root's own entry in its parent's children, when it has a parent.
                scratch.storeBytes(of: UInt64(1), as: UInt64.self)
                var rootKey = MDB_val(mv_size: 8, mv_data: scratch)
                var rootData = MDB_val()
                try lmdbCheck(mdb_get(txn, e.folders, &rootKey, &rootData), "get the root folder")
                let rootParent = rootData.mv_data.loadUnaligned(as: UInt64.self)
                if rootParent != 0 {
                    (scratch + 8).storeBytes(of: rootParent, as: UInt64.self)
                    var parentKey = MDB_val(mv_size: 8, mv_data: scratch + 8)
                    try lmdbCheck(mdb_del(txn, e.children, &parentKey, &rootKey), "unlink the root folder")
                }
                while let folder = pending.popLast() {
                    scratch.storeBytes(of: folder, as: UInt64.self)
                    var key = MDB_val(mv_size: 8, mv_data: scratch)
                    var data = MDB_val()
                    var rc = mdb_cursor_get(cursor, &key, &data, MDB_SET)
                    if rc == MDB_SUCCESS {
                        while rc == MDB_SUCCESS {
                            pending.append(data.mv_data.loadUnaligned(as: UInt64.self))
                            rc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT_DUP)
                        }
                        try lmdbCheck(rc == MDB_NOTFOUND ? MDB_SUCCESS : rc, "children of \(folder)")
                        var parent = MDB_val(mv_size: 8, mv_data: scratch)
                        try lmdbCheck(mdb_del(txn, e.children, &parent, nil), "delete children of \(folder)")
                    } else if rc != MDB_NOTFOUND {
                        try lmdbCheck(rc, "children of \(folder)")
                    }
                    var id = MDB_val(mv_size: 8, mv_data: scratch)
                    try lmdbCheck(mdb_del(txn, e.folders, &id, nil), "delete folder \(folder)")
                }
            }
        }
    }

    func folderCount() throws -> Int { try env.entries(env.folders) }

    /// Entries left in the children index (W6 checks the cascade leaves none).
    func childEntries() throws -> Int { try env.entries(env.children) }

    // MARK: Readers, lifecycle

    func readerFactory() -> @Sendable () throws -> any ReadProbe {
        let env = self.env
        return { try LMDBReadProbe(env: env) }
    }

    func close() throws {
        if durability == .relaxed { try env.sync() }
        reader = nil
        current = nil
    }

    func open() throws -> Bool {
        try openEnvironment()
        return true
    }

    /// `mdb_env_copy2(…, MDB_CP_COMPACT)` into a sibling directory, synced; then the copy replaces the data file and
    /// the environment is opened on it.
    func compact() throws -> Bool {
        let copy = directory + "-compact"
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        let copied = (copy as NSString).appendingPathComponent("data.mdb")
        let data = (directory as NSString).appendingPathComponent("data.mdb")
        try env.copyCompacted(to: copy)
        try fsyncFile(copied, O_RDONLY)
        reader = nil
        current = nil
        guard rename(copied, data) == 0 else { throw LMDBError(code: errno, context: "rename \(copied)") }
        try fsyncFile(directory, O_RDONLY | O_DIRECTORY)
        try FileManager.default.removeItem(atPath: copy)
        try openEnvironment()
        return true
    }

    func bytesOnDisk() -> Int? { DiskUsage.bytes(under: directory) }

    /// A read transaction begun and aborted, each time a new one (not the reused handle).
    func snapshotTakeNanoseconds(iterations: Int) -> Double? {
        let handle = env.handle
        let start = Measure.now()
        for _ in 0..<iterations {
            var txn: OpaquePointer?
            guard mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn) == MDB_SUCCESS else { return nil }
            mdb_txn_abort(txn)
        }
        return Double(Measure.now() - start) / Double(max(iterations, 1))
    }
}

/// Opens `path` with `flags`, fsyncs it and closes it (a file, or a directory after a rename in it).
private func fsyncFile(_ path: String, _ flags: Int32) throws {
    let fd = open(path, flags)
    guard fd >= 0 else { throw LMDBError(code: errno, context: "open \(path)") }
    defer { close(fd) }
    guard fsync(fd) == 0 else { throw LMDBError(code: errno, context: "fsync \(path)") }
}

/// The W7 reader: its own read transaction handle on its own thread, renewed for every query.
final class LMDBReadProbe: ReadProbe {
    private let reader: LMDBReadTransaction
    private let scratch = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16)

    init(env: LMDBEnvironment) throws { reader = try LMDBReadTransaction(env) }

    deinit { scratch.deallocate() }

    /// A scan of every row for its flag: there is no index on it, as in the other engines.
    func countFlagged() throws -> Int {
        try reader.read { txn in
            try withLMDBCursor(txn, reader.env.items) { cursor in
                var key = MDB_val()
                var data = MDB_val()
                var count = 0
                var rc = mdb_cursor_get(cursor, &key, &data, MDB_FIRST)
                while rc == MDB_SUCCESS {
                    if LMDBRow(data).flag { count += 1 }
                    rc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
                }
                try lmdbCheck(rc == MDB_NOTFOUND ? MDB_SUCCESS : rc, "count flagged")
                return count
            }
        }
    }

    func titleLength(id: Int64) throws -> Int {
        try reader.read { txn in try LMDBEngine.titleLength(txn, reader.env.items, id, scratch) }
    }
}

/// An item's row in the items database, read in place: id, score, created, n1…n5 (8 bytes each, native order), then
/// the flag, the title's length and its UTF-8 bytes. Rows sit at any even offset in a page, so reads are unaligned.
struct LMDBRow {
    let base: UnsafeRawPointer

    init(_ value: MDB_val) { base = UnsafeRawPointer(value.mv_data) }

    static let titleOffset = 66

    var id: Int64 { base.loadUnaligned(as: Int64.self) }
    var score: Double { Double(bitPattern: base.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
    var created: Double { Double(bitPattern: base.loadUnaligned(fromByteOffset: 16, as: UInt64.self)) }
    /// n1 … n5 for k = 1 … 5.
    @inline(__always)
    func n(_ k: Int) -> Int64 { base.loadUnaligned(fromByteOffset: 16 + 8 * k, as: Int64.self) }
    var flag: Bool { base.load(fromByteOffset: 64, as: UInt8.self) != 0 }
    var title: String {
        let count = Int(base.load(fromByteOffset: 65, as: UInt8.self))
        return String(decoding: UnsafeRawBufferPointer(start: base + Self.titleOffset, count: count), as: UTF8.self)
    }

    /// Writes `item`'s row at `row` (aligned) and returns its size.
    static func encode(_ item: ItemData, into row: UnsafeMutableRawPointer) -> Int {
        row.storeBytes(of: item.id, as: Int64.self)
        writeScore(item.score, row)
        row.storeBytes(of: item.created.bitPattern, toByteOffset: 16, as: UInt64.self)
        row.storeBytes(of: item.n1, toByteOffset: 24, as: Int64.self)
        row.storeBytes(of: item.n2, toByteOffset: 32, as: Int64.self)
        row.storeBytes(of: item.n3, toByteOffset: 40, as: Int64.self)
        row.storeBytes(of: item.n4, toByteOffset: 48, as: Int64.self)
        row.storeBytes(of: item.n5, toByteOffset: 56, as: Int64.self)
        row.storeBytes(of: item.flag ? 1 : 0, toByteOffset: 64, as: UInt8.self)
        var title = item.title
        return title.withUTF8 { bytes in
            precondition(bytes.count <= 255, "a title longer than the row's length byte")
            row.storeBytes(of: UInt8(bytes.count), toByteOffset: 65, as: UInt8.self)
            (row + titleOffset).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
            return titleOffset + bytes.count
        }
    }

    static func readScore(_ row: UnsafeMutableRawPointer) -> Double {
        Double(bitPattern: row.load(fromByteOffset: 8, as: UInt64.self))
    }

    static func writeScore(_ score: Double, _ row: UnsafeMutableRawPointer) {
        row.storeBytes(of: score.bitPattern, toByteOffset: 8, as: UInt64.self)
    }

    /// The score index's key: the double's bits made to sort as unsigned integers (sign bit flipped for positive
    /// numbers, every bit for negative ones), stored big-endian so LMDB's byte-wise comparison orders them by score.
    static func scoreKey(_ score: Double) -> UInt64 {
        let bits = score.bitPattern
        let ordered = bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
        return ordered.bigEndian
    }

    /// The score back from a key's ordered bits (after `UInt64(bigEndian:)`).
    static func score(ordered: UInt64) -> Double {
        Double(bitPattern: ordered & (1 << 63) != 0 ? ordered & ~(1 << 63) : ~ordered)
    }
}

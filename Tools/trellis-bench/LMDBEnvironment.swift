import CLMDB
import Foundation

/// A failed LMDB call, with the library's message.
struct LMDBError: Error, CustomStringConvertible {
    let code: Int32
    let context: String
    var description: String { "LMDB error \(code) (\(String(cString: mdb_strerror(code)))) in \(context)" }
}

/// Throws unless `rc` is `MDB_SUCCESS`.
@inline(__always)
func lmdbCheck(_ rc: Int32, _ context: @autoclosure () -> String) throws {
    if rc != MDB_SUCCESS { throw LMDBError(code: rc, context: context()) }
}

/// One open LMDB environment (a directory holding `data.mdb` and `lock.mdb`) with the workload's four databases.
///
/// Every pointer to LMDB lives in this file and `LMDBEngine.swift`. The handle is shared with reader threads (W7):
/// LMDB's environment is made for that, and `MDB_NOTLS` lets each thread's read transactions be its own.
final class LMDBEnvironment: @unchecked Sendable {
    /// Address space reserved for the map: enough for scale 100. Without `MDB_WRITEMAP` the file grows only with the
    /// pages written, so this is virtual memory, not disk.
    static let mapSize = 16 << 30

    let handle: OpaquePointer
    /// id → the item's row (`LMDBRow`): `MDB_INTEGERKEY`.
    let items: MDB_dbi
    /// score (order-preserving big-endian key) → id: `MDB_DUPSORT`, ids as fixed integer duplicates.
    let scores: MDB_dbi
    /// folder id → parent id and name.
    let folders: MDB_dbi
    /// parent id → child ids: `MDB_DUPSORT`, what the cascade delete walks.
    let children: MDB_dbi

    /// Opens (creating) the environment in `directory` with `flags` (`MDB_NOTLS` is always added).
    init(directory: String, flags: UInt32) throws {
        var env: OpaquePointer?
        try lmdbCheck(mdb_env_create(&env), "mdb_env_create")
        guard let env else { throw LMDBError(code: -1, context: "mdb_env_create returned no environment") }
        var txn: OpaquePointer?
        do {
            try lmdbCheck(mdb_env_set_mapsize(env, Self.mapSize), "mdb_env_set_mapsize")
            try lmdbCheck(mdb_env_set_maxdbs(env, 4), "mdb_env_set_maxdbs")
            try lmdbCheck(mdb_env_open(env, directory, flags | UInt32(MDB_NOTLS), 0o644), "mdb_env_open \(directory)")
            try lmdbCheck(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
            func open(_ name: String, _ flags: Int32) throws -> MDB_dbi {
                var dbi: MDB_dbi = 0
                try lmdbCheck(mdb_dbi_open(txn, name, UInt32(flags | MDB_CREATE), &dbi), "mdb_dbi_open \(name)")
                return dbi
            }
            let fixedIDs = MDB_DUPSORT | MDB_DUPFIXED | MDB_INTEGERDUP
            items = try open("items", MDB_INTEGERKEY)
            scores = try open("scores", fixedIDs)
            folders = try open("folders", MDB_INTEGERKEY)
            children = try open("children", MDB_INTEGERKEY | fixedIDs)
            let rc = mdb_txn_commit(txn)
            txn = nil
            try lmdbCheck(rc, "mdb_txn_commit (opening the databases)")
        } catch {
            if let txn { mdb_txn_abort(txn) }
            mdb_env_close(env)
            throw error
        }
        handle = env
    }

    deinit { mdb_env_close(handle) }

    /// Runs `body` in a write transaction and commits it; aborts it when `body` throws.
    func write<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        var txn: OpaquePointer?
        try lmdbCheck(mdb_txn_begin(handle, nil, 0, &txn), "mdb_txn_begin")
        let result: T
        do {
            result = try body(txn!)
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try lmdbCheck(mdb_txn_commit(txn), "mdb_txn_commit")
        return result
    }

    /// Turns `MDB_NOSYNC` on or off for the following commits.
    func setNoSync(_ on: Bool) throws {
        try lmdbCheck(mdb_env_set_flags(handle, UInt32(MDB_NOSYNC), on ? 1 : 0), "mdb_env_set_flags")
    }

    /// Flushes everything committed so far to the disk (`mdb_env_sync` forced).
    func sync() throws { try lmdbCheck(mdb_env_sync(handle, 1), "mdb_env_sync") }

    /// Writes a compacted copy (`MDB_CP_COMPACT`: live pages only, renumbered) into the empty directory `path`.
    func copyCompacted(to path: String) throws {
        try lmdbCheck(mdb_env_copy2(handle, path, UInt32(MDB_CP_COMPACT)), "mdb_env_copy2 \(path)")
    }

    /// The number of entries in `dbi`.
    func entries(_ dbi: MDB_dbi) throws -> Int {
        try LMDBReadTransaction(self).read { txn in
            var stat = MDB_stat()
            try lmdbCheck(mdb_stat(txn, dbi, &stat), "mdb_stat")
            return stat.ms_entries
        }
    }
}

/// A read-only transaction handle reused through `mdb_txn_reset` / `mdb_txn_renew`, LMDB's way to read without
/// allocating a transaction each time. Used from one thread at a time; it keeps its environment open.
final class LMDBReadTransaction {
    let env: LMDBEnvironment
    private let txn: OpaquePointer

    init(_ env: LMDBEnvironment) throws {
        self.env = env
        var txn: OpaquePointer?
        try lmdbCheck(mdb_txn_begin(env.handle, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin (read-only)")
        mdb_txn_reset(txn)
        self.txn = txn!
    }

    deinit { mdb_txn_abort(txn) }

    /// Runs `body` on a fresh snapshot: the latest commit when it starts.
    @inline(__always)
    func read<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        try lmdbCheck(mdb_txn_renew(txn), "mdb_txn_renew")
        defer { mdb_txn_reset(txn) }
        return try body(txn)
    }
}

/// Runs `body` with a cursor on `dbi` in `txn`, closed after.
@inline(__always)
func withLMDBCursor<T>(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ body: (OpaquePointer) throws -> T) throws -> T {
    var cursor: OpaquePointer?
    try lmdbCheck(mdb_cursor_open(txn, dbi, &cursor), "mdb_cursor_open")
    defer { mdb_cursor_close(cursor) }
    return try body(cursor!)
}

import CSQLite
import Foundation

/// A failed SQLite call, with the library's message.
struct SQLiteError: Error, CustomStringConvertible {
    let code: Int32
    let message: String
    var description: String { "SQLite error \(code): \(message)" }
}

/// One SQLite connection, used from the thread that opened it (opened with SQLITE_OPEN_NOMUTEX).
///
/// Every pointer to SQLite lives in this file and `SQLiteStatement`; the engine above speaks Swift values.
final class SQLiteConnection {
    let handle: OpaquePointer

    init(path: String) throws {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(db)
            throw SQLiteError(code: rc, message: "\(message) (\(path))")
        }
        handle = db
    }

    deinit { sqlite3_close_v2(handle) }

    func execute(_ sql: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &error)
        guard rc == SQLITE_OK else {
            let message = error.map { String(cString: $0) } ?? "unknown"
            sqlite3_free(error)
            throw SQLiteError(code: rc, message: "\(message) in: \(sql)")
        }
    }

    func prepare(_ sql: String) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw error(rc, sql) }
        return SQLiteStatement(statement, connection: self)
    }

    /// The single integer a query such as `SELECT count(*) …` returns.
    func scalarInt(_ sql: String) throws -> Int64 {
        let statement = try prepare(sql)
        guard try statement.step() else { throw SQLiteError(code: SQLITE_ERROR, message: "no row from: \(sql)") }
        return statement.int64(0)
    }

    func error(_ rc: Int32, _ context: String) -> SQLiteError {
        SQLiteError(code: rc, message: "\(String(cString: sqlite3_errmsg(handle))) in: \(context)")
    }
}

/// A prepared statement, reused: `reset()`, bind, `step()` until false. One read for a single row resets after it:
/// a statement left on a row holds its read transaction open, and WAL checkpoints cannot pass it.
final class SQLiteStatement {
    let handle: OpaquePointer
    private let connection: SQLiteConnection

    /// SQLITE_TRANSIENT: SQLite copies bound text before the bind call returns.
    private static var transient: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

    fileprivate init(_ handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    @inline(__always)
    func reset() { sqlite3_reset(handle) }

    @inline(__always)
    func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(handle, index, value) }

    @inline(__always)
    func bind(_ index: Int32, _ value: Double) { sqlite3_bind_double(handle, index, value) }

    @inline(__always)
    func bindNull(_ index: Int32) { sqlite3_bind_null(handle, index) }

    func bind(_ index: Int32, _ value: String) {
        var value = value
        value.withUTF8 { bytes in
            _ = bytes.withMemoryRebound(to: CChar.self) {
                sqlite3_bind_text(handle, index, $0.baseAddress, Int32($0.count), Self.transient)
            }
        }
    }

    /// Steps once: true with a row ready to read, false when done.
    @discardableResult
    func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw connection.error(rc, String(cString: sqlite3_sql(handle)))
    }

    /// Resets, then steps to completion: for statements that return no rows.
    func run() throws {
        reset()
        while try step() {}
    }

    @inline(__always)
    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    @inline(__always)
    func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

    /// The column as a Swift `String`, as a fetch in an app would materialise it.
    func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }
}

import Foundation
import Trellis

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The options every store command shares: the store's directory and `--json`.
struct CommonOptions {
    var store: String
    var json: Bool

    init(store: String, json: Bool) {
        self.store = store
        self.json = json
    }

    /// Takes `--json` and the `STORE` positional from `arguments`.
    init(parsing arguments: inout Arguments, json allowsJSON: Bool = true) throws {
        json = allowsJSON && arguments.flag("--json")
        store = try arguments.positional("STORE")
    }
}

/// A store directory the tool has checked it can read, and the files in it by kind.
///
/// The checks come first so that "cannot open" (exit 3: missing, not a directory, not readable, not a store) is
/// told apart from "opened and found damaged" (exit 1) before anything reads a record.
struct StoreLocation {
    let url: URL
    let reader: JournalReader
    /// Every file in the directory with its size, sorted by name.
    let files: [(name: String, bytes: Int)]

    init(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw CannotOpen("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw CannotOpen("\(path) is not a directory; a Trellis store is a directory")
        }
        guard access(path, R_OK | X_OK) == 0 else {
            throw CannotOpen("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
        } catch {
            throw CannotOpen("cannot list \(path): \(error.localizedDescription)")
        }
        guard names.contains(where: { $0 == "MANIFEST" || StoreFileName.isStoreFile($0) }) else {
            throw CannotOpen("\(path) is not a Trellis store (no MANIFEST, segment or checkpoint files)")
        }
        url = URL(fileURLWithPath: path)
        reader = try JournalReader(directory: url)
        files = names.map { name in
            var info = stat()
            let size = stat(path + "/" + name, &info) == 0 ? Int(info.st_size) : 0
            return (name, size)
        }
    }

    /// The total size of the directory's files.
    var totalBytes: Int { files.reduce(0) { $0 + $1.bytes } }

    func bytes(of name: String) -> Int? { files.first { $0.name == name }?.bytes }

    /// The on-disk format version, from the manifest's header (bytes 8–9, little-endian; see journal-format.md);
    /// nil when the manifest is missing or too short to say.
    func formatVersion() -> Int? {
        guard let handle = FileHandle(forReadingAtPath: url.appendingPathComponent("MANIFEST").path) else {
            return nil
        }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 10), head.count == 10 else { return nil }
        return Int(head[8]) | Int(head[9]) << 8
    }
}

/// The names store files have (journal-format.md): `segment-<16 hex>.trj`, `checkpoint-<16 hex>.trc`.
enum StoreFileName {
    static func segmentID(_ name: String) -> UInt64? { number(name, "segment-", ".trj") }
    static func checkpointSequence(_ name: String) -> UInt64? { number(name, "checkpoint-", ".trc") }
    static func segmentName(_ id: UInt64) -> String { "segment-" + hex16(id) + ".trj" }
    static func checkpointName(_ sequence: UInt64) -> String { "checkpoint-" + hex16(sequence) + ".trc" }

    static func isStoreFile(_ name: String) -> Bool { segmentID(name) != nil || checkpointSequence(name) != nil }

    static func hex16(_ n: UInt64) -> String {
        let digits = String(n, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }

    private static func number(_ name: String, _ prefix: String, _ suffix: String) -> UInt64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.count == prefix.count + 16 + suffix.count else {
            return nil
        }
        return UInt64(name.dropFirst(prefix.count).prefix(16), radix: 16)
    }
}

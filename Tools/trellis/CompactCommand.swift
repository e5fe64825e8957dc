import Foundation
import Trellis

/// `trellis compact STORE`: writes a checkpoint of the live objects and drops the journal it replaces.
struct CompactCommand: Command {
    static let name = "compact"
    static let summary = "write a checkpoint and drop the journal it covers; prints sizes before and after"
    static let help = """
        usage: trellis compact STORE [--json]

        Opens the store for writing, writes a checkpoint of its current objects, drops the journal segments and the
        old checkpoint it replaces, and prints the store's size before and after. Files no manifest references
        (left by a crash) are removed on the way.

        It refuses, changing nothing, when another process holds the store open for writing (exit 3: compact from
        that process with Store.compact(), or after it closes the store), and when the store is damaged, a torn
        tail included (exit 1: run `trellis verify`, then `trellis repair`).

        options:
          --json    {"store", "bytesBefore", "bytesAfter", "checkpointSequence", "removedFiles"}
        """

    var options: CommonOptions

    init(parsing arguments: inout Arguments) throws { options = try CommonOptions(parsing: &arguments) }

    func run(_ console: Console) throws -> ExitCode {
        let location = try StoreLocation(options.store)
        let schema = try location.reader.schema()
        let before = location.totalBytes
        let store: Store
        do {
            // Strict: compaction must never be the thing that quietly drops a torn tail or skips damage.
            store = try Store(
                directory: location.url, schema: schema,
                options: StoreOptions(recovery: .strict, compaction: .manual))
        } catch let error as TrellisError where error.code == .locked {
            throw CannotOpen(
                "cannot compact \(options.store): another process holds it open for writing (\(error.message)). "
                    + "Compact from that process with Store.compact(), or after it closes the store")
        } catch let error as TrellisError where error.code == .corrupt {
            throw CommandFailure(
                "cannot compact \(options.store): the store is damaged (\(error.message)). "
                    + "Run `trellis verify`, then `trellis repair`; nothing was changed")
        }
        let removed = store.recoveryReport?.removedFiles ?? []
        let progress = console.progress("compacting")
        progress.update(0)
        do {
            try store.compact()
            try store.close()
        } catch {
            try? store.close()
            throw error
        }
        progress.finish()
        let after = try StoreLocation(options.store)
        let checkpoint = (try? after.reader.manifest().checkpointSequence) ?? 0
        if options.json {
            let doc = JSON.object([
                ("store", .string(location.url.path)), ("bytesBefore", .int(before)),
                ("bytesAfter", .int(after.totalBytes)), ("checkpointSequence", .int(checkpoint)),
                ("removedFiles", .array(removed.map { .string($0) })),
            ])
            console.line(doc.rendered())
        } else {
            console.line(
                "compacted \(location.url.path): \(ValueFormat.bytes(before)) → \(ValueFormat.bytes(after.totalBytes)) "
                    + "(reclaimed \(ValueFormat.bytes(max(0, before - after.totalBytes)))); "
                    + "checkpoint at sequence \(checkpoint)")
            if !removed.isEmpty { console.line("removed leftover files: \(removed.joined(separator: ", "))") }
        }
        return .ok
    }
}

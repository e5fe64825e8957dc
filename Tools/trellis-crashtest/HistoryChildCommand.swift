import Foundation
import Trellis

/// The other process of the history tests (`HistoryCrossProcessTests`): it opens a store of `Note`s that keeps its
/// history for the consumer "sync", makes commits of every kind, compacts after each round, and prints what each
/// commit did, so the test can check that a consumer that stopped before this process ran reads exactly these
/// changes afterwards.
enum HistoryChildCommand {
    /// The retention both processes open the store with.
    static let retention = HistoryRetention(consumers: ["sync"])

    /// `rounds` rounds of: insert a note, rename the oldest one, and every second round delete the newest one before
    /// this round's; a compaction after each round. Prints one line per change: `insert SEQ UID TEXT`,
    /// `update SEQ UID OLD NEW` and `delete SEQ UID TEXT`, then `compacted SEQ` and finally `closed SEQ`.
    static func run(directory: URL, rounds: Int) throws {
        var options = StoreOptions(compaction: .manual)
        options.history = retention
        let store = try Store(directory: directory, models: [Note.self], options: options)
        let context = ModelContext(store)
        context.transactionAuthor = "child"
        for round in 1...max(rounds, 1) {
            let note = Note()
            note.text = "child \(round)"
            context.insert(note)
            try context.save()
            say("insert \(store.snapshot.sequence) \(note.uid.uuidString) \(note.text)")

            let notes = try context.fetch(FetchDescriptor<Note>()).sorted { $0.created < $1.created }
            if let oldest = notes.first {
                let old = oldest.text
                oldest.text = "renamed \(round)"
                try context.save()
                say("update \(store.snapshot.sequence) \(oldest.uid.uuidString) \(old) \(oldest.text)")
            }
            if round % 2 == 0, notes.count >= 2 {
                let doomed = notes[notes.count - 2]
                let text = doomed.text
                let uid = doomed.uid.uuidString
                context.delete(doomed)
                try context.save()
                say("delete \(store.snapshot.sequence) \(uid) \(text)")
            }
            try store.compact()
            say("compacted \(store.snapshot.sequence)")
        }
        try store.close()
        say("closed \(store.snapshot.sequence)")
    }
}

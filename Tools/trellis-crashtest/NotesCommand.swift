import Foundation
import Trellis

/// A model class written the way SwiftData users write them: every default is computed when an object is made, so each
/// process (and each object) gets its own `UUID()` and `Date()`. `MigrationCrossProcessTests` declares the same class
/// in the test process.
final class Note: Model {
    @Attribute var uid = UUID()
    @Attribute var created = Date()
    @Attribute var text = ""
}

enum NotesCommand {
    /// One line per note: `note <uid>\t<created as timeIntervalSince1970>\t<text>`, the form the tests parse.
    static func line(_ note: Note) -> String {
        "note \(note.uid.uuidString)\t\(note.created.timeIntervalSince1970)\t\(note.text)"
    }

    /// Opens the store of notes in `directory` (creating it), inserts one note holding `text` and saves it through a
    /// context, then prints every note, oldest first (ties by uid), and `migrations N` for the store's history.
    static func run(directory: URL, adding text: String?) throws {
        let store = try Store(directory: directory, models: [Note.self])
        let context = ModelContext(store)
        if let text {
            let note = Note()
            note.text = text
            context.insert(note)
            try context.save()
        }
        let notes = try context.fetch(FetchDescriptor<Note>()).sorted {
            ($0.created, $0.uid.uuidString) < ($1.created, $1.uid.uuidString)
        }
        for note in notes { say(line(note)) }
        say("migrations \(store.schema.history.count)")
        try store.close()
        say("closed \(store.snapshot.sequence)")
    }
}

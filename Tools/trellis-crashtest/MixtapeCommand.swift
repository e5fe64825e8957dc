import Foundation
import Trellis

/// Playlists whose tracks keep an order (`@Relationship(ordered: true)`), as `OrderedModelTests` writes them.
enum MixtapeV1 {
    final class Playlist: Model {
        @Attribute var name = ""
        @Relationship(deleteRule: .cascade, inverse: \Track.playlist, ordered: true) var tracks: [Track]
    }

    final class Track: Model {
        @Attribute var title = ""
        @Relationship var playlist: Playlist?
    }
}

/// The next version: `Playlist` renamed `Queue`, and tracks count their plays (a new attribute): an inferred
/// migration that keeps every list's order.
enum MixtapeV2 {
    final class Queue: Model {
        override class var originalEntityName: String? { "Playlist" }
        @Attribute var name = ""
        @Relationship(deleteRule: .cascade, inverse: \Track.playlist, ordered: true) var tracks: [Track]
    }

    final class Track: Model {
        @Attribute var title = ""
        @Attribute var plays = 0
        @Relationship var playlist: Queue?
    }
}

enum MixtapeCommand {
    /// `queue NAME: TITLE TITLE …`, the tracks in order.
    static func line(_ queue: MixtapeV2.Queue) -> String {
        "queue \(queue.name): " + queue.tracks.map(\.title).joined(separator: " ")
    }

    /// The edits `run` makes to a queue's titles: the last track moved to the front, the one at index 2 removed
    /// (when there are more than 3), a new track `new-NAME` inserted at index 1.
    static func edited(_ titles: [String], name: String) -> [String] {
        var out = titles
        if let last = out.popLast() { out.insert(last, at: 0) }
        if out.count > 3 { out.remove(at: 2) }
        out.insert("new-\(name)", at: min(1, out.count))
        return out
    }

    /// Opens the store with the V2 models (migrating a V1 store), prints every queue by name, makes `edited`'s edits
    /// through the typed API and saves, prints the queues again, and closes.
    static func run(directory: URL) throws {
        let store = try Store(directory: directory, models: [MixtapeV2.Queue.self, MixtapeV2.Track.self])
        let context = ModelContext(store)
        let queues = try context.fetch(FetchDescriptor<MixtapeV2.Queue>(sortBy: [SortDescriptor(\.name)]))
        for queue in queues { say(line(queue)) }
        for queue in queues {
            if let last = queue.tracks.last {
                queue.tracks.removeLast()
                queue.tracks.insert(last, at: 0)
            }
            if queue.tracks.count > 3 {
                // Removed from the list, the track stays, on no queue.
                queue.tracks.remove(at: 2)
            }
            let track = MixtapeV2.Track()
            track.title = "new-\(queue.name)"
            context.insert(track)
            queue.tracks.insert(track, at: min(1, queue.tracks.count))
        }
        try context.save()
        for queue in queues { say(line(queue)) }
        try store.close()
        say("closed \(store.snapshot.sequence)")
    }
}

import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Issue 19: `@Relationship(ordered: true)` on a to-many property reads as an array in order; inserts, removes and
/// moves at positions go through the context (pending reads included) and saves, and the order survives a
/// migration that renames the entity and adds an attribute, reopened in another process.
@Suite struct OrderedModelTests {
    typealias Playlist = MixtapeV1.Playlist
    typealias Track = MixtapeV1.Track

    static func titles(_ playlist: Playlist) -> [String] { playlist.tracks.map(\.title) }

    /// Random typed edits on two playlists agree with arrays of titles before each save (pending), after it, and in a
    /// fresh context; then a child process opens the store with the next models (a migration), reads the same
    /// order, edits it and saves; this process reopens it and reads the child's order.
    @Test func typedEditsKeepTheirOrderThroughSavesMigrationAndAnotherProcess() throws {
        let temporary = TemporaryDirectory()
        let url = temporary.store
        var expected: [String: [String]] = ["a": [], "b": []]
        do {
            let store = try Store(directory: url, models: [Playlist.self, Track.self])
            let context = ModelContext(store)
            var playlists: [String: Playlist] = [:]
            for name in ["a", "b"] {
                let p = Playlist()
                p.name = name
                context.insert(p)
                playlists[name] = p
            }
            var random = SeededRandom(seed: 0x0d19)
            var number = 0
            for round in 0..<30 {
                for _ in 0..<8 {
                    let name = random.chance(50) ? "a" : "b"
                    let other = name == "a" ? "b" : "a"
                    let p = playlists[name]!
                    let count = expected[name]!.count
                    switch random.below(10) {
                    case 0..<4:  // a new track at a position
                        number += 1
                        let track = Track()
                        track.title = "t\(number)"
                        let at = random.below(count + 1)
                        p.tracks.insert(track, at: at)
                        expected[name]!.insert(track.title, at: at)
                    case 4, 5:  // a move
                        guard count > 0 else { continue }
                        let (from, to) = (random.below(count), random.below(count))
                        let track = p.tracks.remove(at: from)
                        p.tracks.insert(track, at: to)
                        expected[name]!.insert(expected[name]!.remove(at: from), at: to)
                    case 6:  // the inverse end set: the track leaves the other list for the end of this one
                        guard let track = playlists[other]!.tracks.first else { continue }
                        track.playlist = p
                        expected[other]!.removeFirst()
                        expected[name]!.append(track.title)
                    case 7:  // a remove at a position
                        guard count > 0 else { continue }
                        let at = random.below(count)
                        p.tracks.remove(at: at)
                        expected[name]!.remove(at: at)
                    case 8:  // a track deleted
                        guard count > 0 else { continue }
                        let at = random.below(count)
                        context.delete(p.tracks[at])
                        expected[name]!.remove(at: at)
                    default:  // reversed
                        p.tracks.reverse()
                        expected[name]!.reverse()
                    }
                }
                for name in ["a", "b"] {
                    #expect(Self.titles(playlists[name]!) == expected[name]!, "pending, round \(round)")
                }
                try context.save()
                let fresh = ModelContext(store)
                for p in try fresh.fetch(FetchDescriptor<Playlist>()) {
                    #expect(Self.titles(p) == expected[p.name]!, "saved, round \(round)")
                    for track in p.tracks { #expect(track.playlist?.name == p.name) }
                }
            }
            #expect(expected.values.allSatisfy { $0.count > 5 }, "\(expected)")
            try store.close()
        }
        let child = try CrashChild.run(["mixtape", "--dir", url.path])
        #expect(child.exitStatus == 0 && !child.killed, "\(child.lines.suffix(3))")
        let edited = expected.mapValues { _ in [String]() }.keys.sorted().reduce(into: [String: [String]]()) {
            $0[$1] = MixtapeCommand.edited(expected[$1]!, name: $1)
        }
        let lines =
            ["a", "b"].map { "queue \($0): " + expected[$0]!.joined(separator: " ") }
            + ["a", "b"].map { "queue \($0): " + edited[$0]!.joined(separator: " ") }
        #expect(Array(child.lines.dropLast()) == lines)

        let store = try Store(directory: url, models: [MixtapeV2.Queue.self, MixtapeV2.Track.self])
        let context = ModelContext(store)
        let queues = try context.fetch(FetchDescriptor<MixtapeV2.Queue>(sortBy: [SortDescriptor(\.name)]))
        #expect(queues.map(\.name) == ["a", "b"])
        for queue in queues {
            #expect(queue.tracks.map(\.title) == edited[queue.name]!)
            #expect(queue.tracks.allSatisfy { $0.plays == 0 })
        }
        try store.close()
        let problems = try CrashExpectations.problems(url)
        #expect(problems.isEmpty, "\(problems)")
    }

    /// The schema says which relationships are ordered; a repeated target is kept once, where it first appears; a
    /// child context's order reaches its parent and the store.
    @Test func schemaRepeatsAndChildContexts() throws {
        let store = try Store(models: [Playlist.self, Track.self])
        let layout = try #require(store.schema.entities.first { $0.name == "Playlist" })
        #expect(layout.relationships.map(\.isOrdered) == [true])
        #expect(store.schema.entities.first { $0.name == "Track" }?.relationships.map(\.isOrdered) == [false])

        let context = ModelContext(store)
        let p = Playlist()
        p.name = "p"
        context.insert(p)
        let tracks = (0..<4).map { i -> Track in
            let t = Track()
            t.title = "t\(i)"
            return t
        }
        p.tracks = [tracks[2], tracks[0], tracks[2], tracks[1]]
        #expect(Self.titles(p) == ["t2", "t0", "t1"])
        try context.save()

        let child = ModelContext(parent: context)
        let q = try #require(try child.fetch(FetchDescriptor<Playlist>()).first)
        q.tracks.swapAt(0, 2)
        let extra = Track()
        extra.title = "x"
        q.tracks.insert(extra, at: 1)
        #expect(Self.titles(q) == ["t1", "x", "t0", "t2"])
        #expect(Self.titles(p) == ["t2", "t0", "t1"], "the parent sees nothing before the child saves")
        try child.save()
        #expect(Self.titles(p) == ["t1", "x", "t0", "t2"])
        try context.save()
        let fresh = ModelContext(store)
        #expect(
            Self.titles(try #require(try fresh.fetch(FetchDescriptor<Playlist>()).first)) == ["t1", "x", "t0", "t2"])
    }

    /// Two contexts edit one list: the second save writes the order of the targets it knew, and a target the first
    /// save added meanwhile stays, after them.
    @Test func aSaveKeepsWhatAnotherSaveAddedMeanwhile() throws {
        let store = try Store(models: [Playlist.self, Track.self])
        let setup = ModelContext(store)
        let p = Playlist()
        setup.insert(p)
        for i in 0..<3 {
            let t = Track()
            t.title = "t\(i)"
            p.tracks.append(t)
        }
        try setup.save()

        let a = ModelContext(store)
        let b = ModelContext(store)
        let pa = try #require(try a.fetch(FetchDescriptor<Playlist>()).first)
        let pb = try #require(try b.fetch(FetchDescriptor<Playlist>()).first)
        pb.tracks.reverse()
        let x = Track()
        x.title = "x"
        pa.tracks.insert(x, at: 0)
        try a.save()
        try b.save()
        let fresh = ModelContext(store)
        let stored = try #require(try fresh.fetch(FetchDescriptor<Playlist>()).first)
        #expect(Self.titles(stored) == ["t2", "t1", "t0", "x"])
    }

    /// An object given its ordered targets before it is inserted keeps their order; deleting the owner cascades.
    @Test func anUnmanagedObjectsOrderIsKeptAndDeletingItCascades() throws {
        let store = try Store(models: [Playlist.self, Track.self])
        let context = ModelContext(store)
        let p = Playlist()
        p.tracks = ["c", "a", "b"].map { title in
            let t = Track()
            t.title = title
            return t
        }
        context.insert(p)
        #expect(Self.titles(p) == ["c", "a", "b"])
        try context.save()
        let fresh = ModelContext(store)
        let stored = try #require(try fresh.fetch(FetchDescriptor<Playlist>()).first)
        #expect(Self.titles(stored) == ["c", "a", "b"])
        #expect(stored.tracks.allSatisfy { $0.playlist?.objectID == stored.objectID })
        fresh.delete(stored)
        try fresh.save()
        #expect(try ModelContext(store).fetchCount(FetchDescriptor<Track>()) == 0)
    }
}

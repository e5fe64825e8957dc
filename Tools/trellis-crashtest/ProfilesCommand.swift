import Foundation
import Trellis

/// Every leaf type a composite attribute supports, optional and required, nested twice, for the round-trip tests.
struct Leaves: Codable, Equatable {
    var flag = false
    var int = 0
    var int8: Int8 = 0
    var int16: Int16 = 0
    var int32: Int32 = 0
    var int64: Int64 = 0
    var double = 0.0
    var float: Float = 0
    var string = ""
    var date = Date(timeIntervalSinceReferenceDate: 0)
    var data = Data()
    var uuid = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    var url = URL(string: "https://example.org")!
    var decimal = Decimal(0)
    var maybeInt: Int?
    var maybeString: String?
    var maybeDate: Date?
    var maybeData: Data?
    var maybeUUID: UUID?
    var maybeURL: URL?
    var maybeDecimal: Decimal?
    var maybeDouble: Double?
    var maybeFlag: Bool?
}

/// A composite with a required and an optional nested composite.
struct Card: Codable, Equatable {
    struct Geo: Codable, Equatable {
        var lat = 0.0
        var lon = 0.0
        var label: String?
    }

    var leaves = Leaves()
    var geo = Geo()
    var extra: Geo?
}

/// A model with a required composite and an optional one (a presence column of its own).
final class Profile: Model {
    @Attribute var number = 0
    @Attribute var card = Card()
    @Attribute var backup: Card?
}

enum ProfilesCommand {
    /// The card of profile `n`, as written by round `round` (each round changes one field of the previous profile).
    /// Nulls, nesting and absent composites vary with `n`.
    static func card(_ n: Int, round: Int) -> Card {
        var c = Card()
        let v = n * 7 + round
        c.leaves.flag = n % 2 == 1
        c.leaves.int = v - 50
        c.leaves.int8 = Int8(truncatingIfNeeded: -v)
        c.leaves.int16 = Int16(truncatingIfNeeded: v * 300)
        c.leaves.int32 = Int32(truncatingIfNeeded: v * 70_000)
        c.leaves.int64 = Int64(v) << 40
        c.leaves.double = Double(v) / 3
        c.leaves.float = Float(v) / 7
        c.leaves.string = "città \(v) 🌍"
        c.leaves.date = Date(timeIntervalSinceReferenceDate: Double(v) * 86_400.5)
        c.leaves.data = Data((0..<(v % 5)).map { UInt8($0 * 51) })
        c.leaves.uuid = UUID(uuid: (UInt8(v % 256), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
        c.leaves.url = URL(string: "https://example.org/\(v)?q=\(n)")!
        c.leaves.decimal = Decimal(string: "\(v).25")!
        if n % 3 != 0 {
            c.leaves.maybeInt = -v
            c.leaves.maybeString = ""
            c.leaves.maybeDate = Date(timeIntervalSinceReferenceDate: -Double(v))
            c.leaves.maybeData = Data([UInt8(v % 256)])
            c.leaves.maybeUUID = UUID(uuid: (9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, UInt8(v % 256)))
            c.leaves.maybeURL = URL(string: "file:///tmp/\(v)")!
            c.leaves.maybeDecimal = Decimal(-v)
            c.leaves.maybeDouble = -0.0
            c.leaves.maybeFlag = n % 2 == 0
        }
        c.geo = Card.Geo(lat: Double(v) / 10, lon: -Double(v) / 10, label: n % 2 == 0 ? nil : "g\(v)")
        c.extra = n % 4 == 1 ? nil : Card.Geo(lat: 1, lon: 2, label: n % 4 == 2 ? nil : "x\(v)")
        return c
    }

    /// Profile `n`'s backup: nil for every third profile, else a card whose optional fields are all nil.
    static func backup(_ n: Int) -> Card? {
        guard n % 3 != 0 else { return nil }
        var c = Card()
        c.leaves.string = "backup \(n)"
        c.extra = n % 2 == 0 ? Card.Geo() : nil
        return c
    }

    /// What round `rounds` leaves: profiles 1…rounds, each changed by the rounds after it (its `int` and its
    /// `geo.label`, one field each).
    static func expected(after rounds: Int) -> [(number: Int, card: Card, backup: Card?)] {
        (1...max(rounds, 1)).prefix(rounds).map { n in
            var card = card(n, round: n)
            for later in (n + 1)..<(rounds + 1) {
                card.leaves.int = later * 1_000 + n
                card.geo.label = later % 2 == 0 ? nil : "changed \(later)"
            }
            return (n, card, backup(n))
        }
    }

    /// A profile as one line: `profile <number> <card> <backup>`, the form the tests compare.
    static func line(_ number: Int, _ card: Card, _ backup: Card?) -> String {
        "profile \(number) \(card) \(backup.map { "\($0)" } ?? "nil")"
    }

    /// Round `round`: opens the store in `directory` (creating it), inserts profile `round`, changes two fields of
    /// every earlier profile in a second save, compacts (a checkpoint) on every third round, then prints every profile
    /// by number and `closed N`.
    static func run(directory: URL, round: Int) throws {
        let store = try Store(directory: directory, models: [Profile.self])
        let context = ModelContext(store)
        if round > 0 {
            let profile = Profile()
            profile.number = round
            profile.card = card(round, round: round)
            profile.backup = backup(round)
            context.insert(profile)
            try context.save()
            for earlier in try context.fetch(FetchDescriptor<Profile>(predicate: #Predicate { $0.number < round })) {
                earlier.card.leaves.int = round * 1_000 + earlier.number
                earlier.card.geo.label = round % 2 == 0 ? nil : "changed \(round)"
            }
            try context.save()
            if round % 3 == 0 { try store.compact() }
        }
        let profiles = try context.fetch(FetchDescriptor<Profile>(sortBy: [SortDescriptor(\.number)]))
        for p in profiles { say(line(p.number, p.card, p.backup)) }
        try store.close()
        say("closed \(store.snapshot.sequence)")
    }
}

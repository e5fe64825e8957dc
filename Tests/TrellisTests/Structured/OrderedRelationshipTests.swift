import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore
@testable import trellis_crashtest

/// Issue 19: ordered to-many relationships keep the order of their targets through inserts, moves and removes at
/// positions, the journal, checkpoints, compaction and reopening in another process; the inverse end follows.
@Suite struct OrderedRelationshipTests {
    typealias X = CrashExpectations

    /// What the store should hold: each board's two lists, as arrays.
    struct Lists {
        var cards: [ObjectID: [ObjectID]] = [:]
        var pins: [ObjectID: [ObjectID]] = [:]
        /// Cards that exist, on a board or not.
        var liveCards: [ObjectID] = []

        /// The `OrderedCommand.lines` this model gives.
        func lines() -> [String] {
            cards.keys.sorted().flatMap { board in
                [
                    "board \(board.serial) cards: " + cards[board]!.map { String($0.serial) }.joined(separator: " "),
                    "board \(board.serial) pins: " + pins[board]!.map { String($0.serial) }.joined(separator: " "),
                ]
            }
        }

        func board(of card: ObjectID) -> ObjectID? { cards.first { $0.value.contains(card) }?.key }

        mutating func removeEverywhere(_ card: ObjectID) {
            for b in cards.keys {
                cards[b]!.removeAll { $0 == card }
                pins[b]!.removeAll { $0 == card }
            }
        }
    }

    /// The random workload: `operations` edits in commits of 1 to 8, on boards that come and go. Calls `check` after
    /// every commit with the store and the model.
    static func workload(
        _ store: Store, _ lists: inout Lists, seed: UInt64, operations: Int, check: (Store, Lists) throws -> Void
    ) throws {
        var random = SeededRandom(seed: seed)
        var done = 0
        var number = 0
        while done < operations {
            var tx = store.transaction()
            var deleting: ObjectID?
            for _ in 0..<(1 + random.below(8)) where deleting == nil {
                done += 1
                number += 1
                let boards = lists.cards.keys.sorted()
                let board = boards[random.below(boards.count)]
                let count = lists.cards[board]!.count
                let pinCount = lists.pins[board]!.count
                switch random.below(100) {
                case 0..<25:  // a new card at a position
                    let card = try tx.insert("Card", ["title": .string("card \(number)")])
                    let at = random.below(count + 1)
                    try tx.link(board, "cards", card, at: at)
                    lists.cards[board]!.insert(card, at: at)
                    lists.liveCards.append(card)
                case 25..<35:  // an existing card (on another board, this one or none) at a position
                    guard !lists.liveCards.isEmpty else { continue }
                    let card = lists.liveCards[random.below(lists.liveCards.count)]
                    let old = lists.board(of: card)
                    let at = random.below(old == board ? count : count + 1)
                    try tx.link(board, "cards", card, at: at)
                    if let old { lists.cards[old]!.removeAll { $0 == card } }
                    lists.cards[board]!.insert(card, at: at)
                case 35..<50:  // a move within the list
                    guard count > 0 else { continue }
                    let (from, to) = (random.below(count), random.below(count))
                    try tx.move(board, "cards", from: from, to: to)
                    lists.cards[board]!.insert(lists.cards[board]!.remove(at: from), at: to)
                case 50..<58:  // a remove at a position: the card stays, on no board
                    guard count > 0 else { continue }
                    let at = random.below(count)
                    try tx.unlink(board, "cards", at: at)
                    lists.cards[board]!.remove(at: at)
                case 58..<64:  // the to-one end set: appended to the new board's list
                    guard !lists.liveCards.isEmpty else { continue }
                    let card = lists.liveCards[random.below(lists.liveCards.count)]
                    try tx.setTarget(card, "board", board)
                    if lists.board(of: card) != board {
                        if let old = lists.board(of: card) { lists.cards[old]!.removeAll { $0 == card } }
                        lists.cards[board]!.append(card)
                    }
                case 64..<76:  // a pin (many-to-many, ordered on this side) inserted or moved
                    guard !lists.liveCards.isEmpty else { continue }
                    let card = lists.liveCards[random.below(lists.liveCards.count)]
                    let held = lists.pins[board]!.contains(card)
                    let at = random.below(held ? pinCount : pinCount + 1)
                    try tx.link(board, "pins", card, at: at)
                    lists.pins[board]!.removeAll { $0 == card }
                    lists.pins[board]!.insert(card, at: at)
                case 76..<84:
                    guard pinCount > 0 else { continue }
                    let (from, to) = (random.below(pinCount), random.below(pinCount))
                    try tx.move(board, "pins", from: from, to: to)
                    lists.pins[board]!.insert(lists.pins[board]!.remove(at: from), at: to)
                case 84..<90:
                    guard pinCount > 0 else { continue }
                    let at = random.below(pinCount)
                    try tx.unlink(board, "pins", at: at)
                    lists.pins[board]!.remove(at: at)
                case 90..<97:  // a card deleted (the last edit of its commit: deletes apply after the edits)
                    guard !lists.liveCards.isEmpty else { continue }
                    let card = lists.liveCards.remove(at: random.below(lists.liveCards.count))
                    try tx.delete(card)
                    lists.removeEverywhere(card)
                    deleting = card
                default:  // a board deleted, its cards with it (cascade), and a new one
                    guard random.chance(30) else { continue }
                    let doomed = lists.cards[board]!
                    try tx.delete(board)
                    for card in doomed { lists.removeEverywhere(card) }
                    lists.liveCards.removeAll { doomed.contains($0) }
                    lists.cards[board] = nil
                    lists.pins[board] = nil
                    let fresh = try tx.insert("Board", ["name": .string("board \(number)")])
                    lists.cards[fresh] = []
                    lists.pins[fresh] = []
                    deleting = board
                }
            }
            _ = try store.commit(tx)
            try check(store, lists)
        }
    }

    static func newBoards(_ store: Store, _ lists: inout Lists, count: Int) throws {
        var tx = store.transaction()
        for i in 0..<count {
            let board = try tx.insert("Board", ["name": .string("board \(i)")])
            lists.cards[board] = []
            lists.pins[board] = []
        }
        _ = try store.commit(tx)
    }

    /// Both ends agree: every card's `board` is the board whose list holds it, and its `pinnedOn` the boards whose
    /// pins hold it.
    static func expectInversesAgree(_ snapshot: Snapshot, _ lists: Lists) throws {
        for card in lists.liveCards {
            #expect(try snapshot.target(card, "board") == lists.board(of: card), "board of \(card)")
            let pinnedOn = lists.pins.filter { $0.value.contains(card) }.keys.sorted()
            #expect(try snapshot.targets(card, "pinnedOn").sorted() == pinnedOn, "pinnedOn of \(card)")
        }
        #expect(try snapshot.count("Card") == lists.liveCards.count)
    }

    /// 10,000 random inserts, moves and removes on two ordered relationships of boards that come and go agree with an
    /// array model after every commit, after compactions, after reopening here and in another process
    /// (`trellis-crashtest ordered`).
    @Test func randomEditsAgreeWithAnArrayModelAcrossCompactionAndReopen() throws {
        let temporary = TemporaryDirectory()
        let url = temporary.store
        var options = StoreOptions()
        options.compaction = .manual
        var lists = Lists()
        var store = try Store(directory: url, schema: OrderedCommand.schema, options: options)
        try Self.newBoards(store, &lists, count: 4)
        var commits = 0
        var mismatches = 0
        for round in 0..<4 {
            try Self.workload(store, &lists, seed: 0x19_0000 + UInt64(round), operations: 2_500) { store, lists in
                commits += 1
                let got = try OrderedCommand.lines(store.snapshot)
                if got != lists.lines() {
                    mismatches += 1
                    if mismatches <= 3 { Issue.record("round \(round), commit \(commits): \(got) != \(lists.lines())") }
                }
                if commits % 100 == 0 { try Self.expectInversesAgree(store.snapshot, lists) }
            }
            #expect(mismatches == 0)
            try Self.expectInversesAgree(store.snapshot, lists)
            if round % 2 == 0 {
                try store.compact()
                #expect(try OrderedCommand.lines(store.snapshot) == lists.lines(), "after compaction, round \(round)")
            }
            try store.close()
            // Another process recovers the checkpoint and the journal after it.
            let child = try CrashChild.run(["ordered", "--dir", url.path])
            #expect(child.exitStatus == 0 && !child.killed, "round \(round): \(child.lines.suffix(3))")
            #expect(Array(child.lines.dropLast()) == lists.lines(), "child, round \(round)")
            store = try Store(directory: url, schema: OrderedCommand.schema, options: options)
            #expect(try OrderedCommand.lines(store.snapshot) == lists.lines(), "reopened, round \(round)")
            try Self.expectInversesAgree(store.snapshot, lists)
        }
        #expect(lists.cards.values.contains { $0.count > 20 }, "the workload grows lists")
        #expect(try JournalReader(directory: url).manifest().checkpointSequence > 0)
        try store.close()
        let problems = try X.problems(url)
        #expect(problems.isEmpty, "\(problems)")
        #expect(commits > 2_000, "\(commits) commits")
    }

    /// Positions are checked at commit: a bad one fails the commit and changes nothing; an unordered relationship
    /// refuses positions.
    @Test func badPositionsFailTheCommit() throws {
        let store = Store(schema: OrderedCommand.schema)
        var lists = Lists()
        try Self.newBoards(store, &lists, count: 1)
        let board = lists.cards.keys.first!
        var tx = store.transaction()
        let a = try tx.insert("Card", ["title": "a"])
        let b = try tx.insert("Card", ["title": "b"])
        try tx.link(board, "cards", a, at: 0)
        try tx.link(board, "cards", b, at: 0)
        _ = try store.commit(tx)
        #expect(try store.snapshot.targets(board, "cards") == [b, a])
        let before = store.snapshot.sequence
        for bad in [
            { (tx: inout Transaction) in try tx.move(board, "cards", from: 2, to: 0) },
            { (tx: inout Transaction) in try tx.move(board, "cards", from: 0, to: 2) },
            { (tx: inout Transaction) in try tx.unlink(board, "cards", at: 2) },
            { (tx: inout Transaction) in try tx.link(board, "cards", a, at: 2) },
        ] {
            var tx = store.transaction()
            try tx.move(board, "cards", from: 0, to: 1)  // would apply, but the commit fails as a whole
            try bad(&tx)
            #expect(throws: TrellisError.self) { try store.commit(tx) }
        }
        #expect(store.snapshot.sequence == before)
        #expect(try store.snapshot.targets(board, "cards") == [b, a])
        var other = store.transaction()
        #expect(throws: TrellisError.self) { try other.link(a, "pinnedOn", board, at: 0) }
        #expect(throws: TrellisError.self) { try other.move(board, "cards", from: -1, to: 0) }
    }

    /// The fingerprint changes for ordered relationships only, so stores written before them keep theirs; the schema
    /// bytes round-trip the flag; a change-set record round-trips place edits with their positions.
    @Test func schemaAndRecordBytesCarryTheOrder() throws {
        var unordered = OrderedCommand.schema.entities
        for e in unordered.indices {
            for r in unordered[e].relationships.indices { unordered[e].relationships[r].isOrdered = false }
        }
        let plain = try Schema(unordered)
        #expect(plain.fingerprint != OrderedCommand.schema.fingerprint)
        var again = plain.entities
        again[0].relationships[0].isOrdered = true
        again[0].relationships[1].isOrdered = true
        #expect(try Schema(again).fingerprint == OrderedCommand.schema.fingerprint)

        let decoded = try SchemaCodec.decode(SchemaCodec.encode(OrderedCommand.schema), context: "test")
        #expect(decoded.entities[0].relationships.map(\.isOrdered) == [true, true])
        #expect(decoded.entities[1].relationships.map(\.isOrdered) == [false, false])
        #expect(decoded.fingerprint == OrderedCommand.schema.fingerprint)

        let board = ObjectID(entity: 0, serial: 3)
        let card = ObjectID(entity: 1, serial: 9)
        let key = RelationshipKey(entity: 0, index: 0)
        let changes = ChangeSet(edits: [
            .init(placing: card, source: board, relationship: key, at: 4, previousPosition: nil),
            .init(placing: card, source: board, relationship: key, at: 0, previousPosition: 4),
            .init(.unlink, source: board, relationship: key, target: card),
        ])
        let bytes = ChangeSetCodec.encode(changes, schema: OrderedCommand.schema)
        let back = try ChangeSetCodec.decode(bytes, schema: OrderedCommand.schema, context: "test")
        #expect(back == changes)
        #expect(back.edits.map(\.previousPosition) == [nil, 4, nil])
        #expect(back.edits.map(\.kind) == [.place, .place, .unlink])
    }

    /// Undo puts a moved target back where it was and removes an inserted one.
    @Test func undoReversesPlaces() throws {
        let store = Store(schema: OrderedCommand.schema)
        var lists = Lists()
        try Self.newBoards(store, &lists, count: 1)
        let board = lists.cards.keys.first!
        var tx = store.transaction()
        let cards = try (0..<4).map { try tx.insert("Card", ["title": .string("c\($0)")]) }
        for (i, c) in cards.enumerated() { try tx.link(board, "cards", c, at: i) }
        _ = try store.commit(tx)
        var edit = store.transaction()
        try edit.move(board, "cards", from: 0, to: 3)
        let extra = try edit.insert("Card", ["title": "x"])
        try edit.link(board, "cards", extra, at: 1)
        let commit = try store.commit(edit)
        #expect(try store.snapshot.targets(board, "cards") == [cards[1], extra, cards[2], cards[3], cards[0]])
        var undo = store.transaction()
        undo.addInverse(of: commit.changes)
        _ = try store.commit(undo)
        #expect(try store.snapshot.targets(board, "cards") == cards)
    }
}

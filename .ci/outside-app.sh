#!/usr/bin/env bash
# Uses Trellis as an app would: a package outside the repository that depends on it by path, with a model whose
# defaults are Date() and UUID(), run twice on one store (two processes), then again with the next version of its
# model (a renamed attribute, a new one with a default, a new index, a list attribute, a composite and an ordered
# to-many), which migrates the store on open; a fourth launch reads what the third stored and the history after the
# token the third one stored, as a sync consumer would; a fifth imports 5,000 notes with compaction at close, and a
# sixth finds that close's checkpoint, replays nothing, looks a note up by its indexed body and reads that index
# in order as rows (`Snapshot.rows`, by the loop and by `forEach`), against its IDs read one object at a time, and
# reads the (pinned, created) index's entries alone (`Snapshot.forEachEntry`) against the rows and against the same
# range read by `forEach(reading:)`.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# A path dependency's package identity is its directory's name.
identity=$(basename "$repo")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/NotesApp/Sources/NotesApp"
cat > "$work/NotesApp/Package.swift" <<SWIFT
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "NotesApp",
    dependencies: [.package(path: "$repo")],
    targets: [.executableTarget(name: "NotesApp", dependencies: [.product(name: "Trellis", package: "$identity")])]
)
SWIFT
cat > "$work/NotesApp/Sources/NotesApp/main.swift" <<'SWIFT'
import Foundation
import Trellis

final class Note: Model {
    @Attribute var uid = UUID()
    @Attribute var created = Date()
    @Attribute var text = ""
}

enum Next {
    struct Place: Codable, Equatable {
        var city = ""
        var zip = ""
    }

    final class Note: Model {
        @Attribute var uid = UUID()
        @Attribute var created = Date()
        @Attribute(.indexed, originalName: "text") var body = ""
        @Attribute var pinned = false
        @Attribute(.indexed) var tags: [String] = []
        @Attribute var place = Place()
        @Relationship var notebook: Notebook?

        override class var indexes: [ModelIndex] { [.index(\Next.Note.pinned, \Next.Note.created)] }
    }

    final class Notebook: Model {
        @Attribute var name = ""
        @Relationship(deleteRule: .nullify, inverse: \Next.Note.notebook, ordered: true) var notes: [Note]
    }
}

let arguments = CommandLine.arguments
let directory = URL(fileURLWithPath: arguments[1])
if arguments.count > 3, arguments[3] == "next" {
    let store = try Store(directory: directory, models: [Next.Note.self, Next.Notebook.self])
    let context = ModelContext(store)
    let note = Next.Note()
    note.body = arguments[2]
    note.tags = ["shared", "new"]
    note.place = Next.Place(city: "Lyon", zip: "69001")
    context.insert(note)
    try context.save()
    let notes = try context.fetch(FetchDescriptor<Next.Note>(sortBy: [SortDescriptor(\.created)]))
    for n in notes {
        print("note \(n.uid) \(n.body) pinned=\(n.pinned)")
    }
    // Structure added by the migration: a list attribute, a composite and an ordered to-many, in the user's order.
    notes[0].tags = ["shared"]
    let book = Next.Notebook()
    book.name = "inbox"
    context.insert(book)
    book.notes = [notes[2], notes[0], notes[1]]
    try context.save()
    print("migrations \(store.schema.history.count)")
    // A sync consumer's token, stored with the app's own state for the next launch.
    try JSONEncoder().encode(try store.currentHistoryToken()).write(to: URL(fileURLWithPath: arguments[4]))
    try store.close()
} else if arguments.count > 3, arguments[3] == "import" {
    // A big import closed with compaction at close: the next launch loads a checkpoint and replays nothing.
    let options = StoreOptions(compaction: .init(atClose: true))
    let store = try Store(directory: directory, models: [Next.Note.self, Next.Notebook.self], options: options)
    let context = ModelContext(store)
    for _ in 0..<5_000 {
        let note = Next.Note()
        note.body = (0..<4).map { _ in UUID().uuidString }.joined()
        context.insert(note)
    }
    try context.save()
    try store.close()
} else if arguments.count > 3, arguments[3] == "reopen" {
    let store = try Store(directory: directory, models: [Next.Note.self, Next.Notebook.self])
    let report = store.recoveryReport
    let atLast = report?.checkpointSequence == store.snapshot.sequence
    let notes = try ModelContext(store).fetchCount(FetchDescriptor<Next.Note>())
    print("reopened checkpoint-at-last=\(atLast) replayed=\(report?.replayedRecords ?? -1) notes=\(notes)")
    // A snapshot's one-value lookup on the indexed body, read back from the checkpoint this open loaded.
    let byBody = try store.schema.index("Note", ["body"])
    let body = try store.schema.attribute("Note", "body")
    let snapshot = store.snapshot
    let found = snapshot.lookup(byBody, .string("one!")).flatMap { snapshot.object($0)?.string(body) }
    print("lookup body=\(found ?? "-") missing=\(snapshot.lookup(byBody, .string("none")) == nil)")
    // The same index read as rows in index order, against its IDs read one object at a time.
    let inOrder = snapshot.rows(byBody).map { $0.string(body) ?? "" }
    let viaIDs = snapshot.scan(byBody).map { snapshot.object($0)?.string(body) ?? "" }
    // The same rows lent to forEach, as the DocC page on queries shows.
    var lent: [String] = []
    snapshot.rows(byBody).forEach { lent.append($0.string(body) ?? "") }
    print("rows count=\(inOrder.count) same-as-scan=\(inOrder == viaIDs) same-lent=\(lent == inOrder)")
    // The (pinned, created) index read alone, rebuilt by this open from the checkpoint: the unpinned notes' dates in
    // order, the same as their rows hold.
    let unpinnedByDate = try store.schema.index("Note", ["pinned", "created"])
    let created = try store.schema.attribute("Note", "created")
    var dates: [Date] = []
    var sameAsRows = true
    snapshot.forEachEntry(unpinnedByDate, from: [.bool(false)], to: [.bool(false)]) { entry in
        dates.append(entry.date(1) ?? .distantPast)
        sameAsRows = sameAsRows && snapshot.object(entry.id)?.date(created) == entry.date(1)
    }
    // The same range read as rows that name the attribute they read (prefetched a batch ahead), as the DocC page shows.
    var hinted: [Date] = []
    snapshot.rows(unpinnedByDate, from: [.bool(false)], to: [.bool(false)]).forEach(reading: [created]) { row in
        hinted.append(row.date(created) ?? .distantPast)
    }
    print(
        "entries unpinned=\(dates.count) ascending=\(dates == dates.sorted()) same-as-rows=\(sameAsRows) "
            + "hinted-same=\(hinted == dates)")
    try store.close()
} else if arguments.count > 3, arguments[3] == "sync" {
    let store = try Store(directory: directory, models: [Next.Note.self, Next.Notebook.self])
    let context = ModelContext(store)
    // What the previous launch stored: the list attribute and composite queried, the ordered to-many in its order.
    let shared = try context.fetchCount(FetchDescriptor<Next.Note>(predicate: #Predicate { $0.tags.contains("shared") }))
    let lyon = try context.fetchCount(FetchDescriptor<Next.Note>(predicate: #Predicate { $0.place.city == "Lyon" }))
    let books = try context.fetch(FetchDescriptor<Next.Notebook>())
    print("structure shared=\(shared) lyon=\(lyon) notebook=\(books.first?.notes.map(\.body) ?? [])")
    context.transactionAuthor = "sync"
    let note = Next.Note()
    note.body = arguments[2]
    context.insert(note)
    try context.save()
    let first = try context.fetch(FetchDescriptor<Next.Note>(sortBy: [SortDescriptor(\.created)]))[0]
    first.body += "!"
    try context.save()
    // The previous launch's token: exactly this launch's two commits follow it.
    let token = try JSONDecoder().decode(HistoryToken.self, from: Data(contentsOf: URL(fileURLWithPath: arguments[4])))
    for transaction in try store.history(since: token) {
        for change in transaction.changes(of: Next.Note.self) {
            let old = change.oldValue(\Next.Note.body) ?? "-"
            let new = change.newValue(\Next.Note.body) ?? "-"
            print("history \(transaction.author ?? "-") \(change.kind) \(old) \(new)")
        }
    }
    try store.close()
} else {
    let store = try Store(directory: directory, models: [Note.self])
    // What this open found: a store the last launch closed cleanly needs nothing written again and keeps no damage.
    if let report = store.recoveryReport {
        print(
            "recovered rewritten=\(report.rewrittenBytes) damaged=\(report.damagedFiles.count) "
                + "warnings=\(store.warnings.count)")
    }
    let context = ModelContext(store)
    let note = Note()
    note.text = arguments[2]
    context.insert(note)
    try context.save()
    for n in try context.fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.created)])) {
        print("note \(n.uid) \(n.text)")
    }
    try store.close()
}
SWIFT
cd "$work/NotesApp"
swift build 2>&1 | tail -1
app=$(swift build --show-bin-path)/NotesApp
store="$work/store"
first=$("$app" "$store" one)
second=$("$app" "$store" two)
third=$("$app" "$store" three next "$work/token.json")
fourth=$("$app" "$store" four sync "$work/token.json")
"$app" "$store" five import
sixth=$("$app" "$store" six reopen)
echo "$first"; echo "$second"; echo "$third"; echo "$fourth"; echo "$sixth"
uid=$(echo "$first" | awk '{print $2}')
# Checks read the launches' output from here-strings: with pipefail, `echo | grep -q` fails when grep matches an early
# line and exits before echo has written the rest (SIGPIPE; CI run of 9cb4f5c).
# The second launch opens the first one's store (new Date() and UUID() defaults) and sees its note unchanged.
[ "$(echo "$second" | grep -c '^note ')" -eq 2 ] || { echo "second launch: expected 2 notes"; exit 1; }
grep -q "^note $uid one$" <<<"$second" || { echo "second launch lost the first note"; exit 1; }
# The first launch's clean close recorded its last record as durable, so the second launch's open rewrites nothing.
grep -q "^recovered rewritten=0 damaged=0 warnings=0$" <<<"$second" || { echo "second launch: expected a clean reopen"; exit 1; }
# The next version migrates: 3 notes, the first with its uid and text under the new name, pinned false.
[ "$(echo "$third" | grep -c '^note ')" -eq 3 ] || { echo "next version: expected 3 notes"; exit 1; }
grep -q "^note $uid one pinned=false$" <<<"$third" || { echo "next version lost the first note"; exit 1; }
grep -q "^migrations 1$" <<<"$third" || { echo "next version: expected one migration"; exit 1; }
# The fourth launch continues from the third one's stored token: its own insert, then its update with old and new
# values, both by its author, and nothing from before the token.
grep -q '^structure shared=2 lyon=1 notebook=\["three", "one", "two"\]$' <<<"$fourth" || { echo "fourth launch: the third one's tags, composite or ordered notebook came back wrong"; exit 1; }
expected=$'history sync insert - four\nhistory sync update one one!'
[ "$(echo "$fourth" | grep '^history ')" = "$expected" ] || { echo "fourth launch: history after the stored token is wrong"; exit 1; }
# The fifth launch imported 5,000 notes with compaction at close: the sixth loads that checkpoint and replays nothing.
grep -q '^reopened checkpoint-at-last=true replayed=0 notes=5004$' <<<"$sixth" || { echo "sixth launch: expected the fifth one's close to leave a checkpoint of everything"; exit 1; }
grep -q '^lookup body=one! missing=true$' <<<"$sixth" || { echo "sixth launch: the lookup by the indexed body found the wrong note"; exit 1; }
grep -q '^rows count=5004 same-as-scan=true same-lent=true$' <<<"$sixth" || { echo "sixth launch: rows(byBody) disagreed with scan and object(_:), or forEach with the loop"; exit 1; }
grep -q '^entries unpinned=5004 ascending=true same-as-rows=true hinted-same=true$' <<<"$sixth" || { echo "sixth launch: forEachEntry on the (pinned, created) index disagreed with the rows, or forEach(reading:) with them"; exit 1; }
echo "outside app: ok"

import Dispatch
import Foundation
import Synchronization
import Trellis

/// The follower of the follow tests in a process of its own (`FollowCrossProcessTests`), which the test may stop
/// with SIGSTOP and resume with SIGCONT, as the system suspends an app extension: it opens the store with
/// `.follower` (inotify on), prints `following K`, then for each commit published `commit S`, or `refresh B S` for a
/// refresh from version B (`Commit.isRefresh`); once it shows commit `until`, it prints `digest D` (`digest(of:)` of
/// what it shows) and `closed S`, and exits. A follower that stops (`Store.failure`) prints `failed MESSAGE` and
/// exits 1; one that does not reach `until` within 600 seconds exits 1.
enum FollowerCommand {
    static func run(directory: URL, until: UInt64) throws {
        let store = try Store(directory: directory, schema: CrashWorkload.schema, options: .follower)
        let reached = DispatchSemaphore(value: 0)
        let done = Atomic<Bool>(false)
        let token = store.observe { commit in
            say(commit.isRefresh ? "refresh \(commit.baseSequence) \(commit.sequence)" : "commit \(commit.sequence)")
            if commit.sequence >= until, !done.exchange(true, ordering: .relaxed) { reached.signal() }
        }
        defer { token.cancel() }
        say("following \(store.snapshot.sequence)")
        if store.snapshot.sequence >= until, !done.exchange(true, ordering: .relaxed) { reached.signal() }
        let deadline = Date().addingTimeInterval(600)
        while reached.wait(timeout: .now() + 0.1) == .timedOut {
            if let failure = store.failure {
                say("failed \(failure.message)")
                exit(1)
            }
            if Date() > deadline { exit(1) }
        }
        say("digest \(digest(of: store.snapshot))")
        try store.close()
        say("closed \(store.snapshot.sequence)")
    }

    /// A 64-bit FNV-1a hash of every folder and item of the crash workload: ID, values (the note by its bytes) and
    /// targets, in ID order. Equal digests: equal stores, as far as the workload's objects go.
    static func digest(of snapshot: Snapshot) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
            for byte in bytes {
                hash ^= UInt64(byte)
                hash = hash &* 0x100_0000_01b3
            }
        }
        for entity in ["Folder", "Item"] {
            let ids = (try? snapshot.fetch(DynamicQuery(entity))) ?? []
            for id in ids.sorted(by: { $0.serial < $1.serial }) {
                mix("\(entity) \(id.serial)".utf8)
                let names = entity == "Folder" ? ["name"] : ["title", "score", "note"]
                for name in names {
                    switch (try? snapshot.value(id, name)) ?? nil {
                    case .data(let data)?: mix(data)
                    case let value?: mix("\(value)".utf8)
                    case nil: mix([0])
                    }
                }
                let relationship = entity == "Folder" ? "items" : "folder"
                let targets = ((try? snapshot.targets(id, relationship)) ?? []).map(\.serial).sorted()
                mix("\(targets)".utf8)
            }
        }
        return String(hash, radix: 16)
    }
}

import Foundation
import TrellisCore

/// How much of its history a store keeps when it compacts (`StoreOptions.history`).
///
/// Compaction replaces the journal with a checkpoint; the history (`Store.history(since:)`, `Store.snapshot(asOf:)`)
/// reads the journal's records. With a retention rule, compaction keeps the records the rule asks for: the checkpoint
/// they start from and the segments holding them stay on disk, listed in the store's `HISTORY` file. A record is kept
/// while any rule wants it, and whole segments are kept (so a little more than asked may be kept).
///
/// The default, `.none`, keeps nothing beyond what the store itself needs: the records since the last checkpoint.
/// It costs nothing (no extra disk, no extra file), and history since the last compaction is still readable.
///
/// ```swift
/// var options = StoreOptions()
/// options.history = HistoryRetention(commits: 10_000, consumers: ["sync"])
/// ```
public struct HistoryRetention: Sendable, Equatable {
    /// Keep at least the last `commits` commits (nil: no such rule).
    public var commits: Int?
    /// Keep at least the commits made in the last `duration` seconds (nil: no such rule).
    public var duration: TimeInterval?
    /// Keep every commit some named consumer has not acknowledged (`Store.acknowledgeHistory(consumer:token:)`); a
    /// consumer that has acknowledged nothing yet holds everything retained.
    public var consumers: Set<String>

    /// A retention of these rules; with none, nothing is kept beyond the journal since the last checkpoint.
    public init(commits: Int? = nil, duration: TimeInterval? = nil, consumers: Set<String> = []) {
        self.commits = commits
        self.duration = duration
        self.consumers = consumers
    }

    /// Nothing kept beyond the journal since the last checkpoint (the default).
    public static let none = HistoryRetention()

    /// Keep at least the last `n` commits.
    public static func commits(_ n: Int) -> HistoryRetention { HistoryRetention(commits: n) }

    /// Keep at least the commits of the last `seconds` seconds.
    public static func duration(_ seconds: TimeInterval) -> HistoryRetention { HistoryRetention(duration: seconds) }

    /// Keep what the named consumers have not acknowledged.
    public static func consumers(_ names: Set<String>) -> HistoryRetention { HistoryRetention(consumers: names) }

    /// Whether it keeps nothing beyond the journal since the last checkpoint.
    public var isNone: Bool { commits == nil && duration == nil && consumers.isEmpty }

    /// Whether every rule lets go of the records up to `sequence`, whose newest was made no later than `time`
    /// (microseconds since 1970), when the newest record is `last` and it is `now`.
    package func releases(
        upTo sequence: UInt64, time: Int64, last: UInt64, now: Int64, acknowledged: [String: UInt64]
    ) -> Bool {
        if let commits, last < sequence + UInt64(max(commits, 0)) { return false }
        if let duration, Double(now - time) < duration * 1_000_000 { return false }
        for consumer in consumers where (acknowledged[consumer] ?? 0) < sequence { return false }
        return true
    }

    /// What the rules say, for `trellis info` and error messages.
    public var summary: String {
        var rules: [String] = []
        if let commits { rules.append("the last \(commits) commits") }
        if let duration { rules.append("commits of the last \(duration) s") }
        if !consumers.isEmpty { rules.append("until acknowledged by \(consumers.sorted().joined(separator: ", "))") }
        return rules.isEmpty ? "none beyond the journal since the last checkpoint" : rules.joined(separator: "; ")
    }
}

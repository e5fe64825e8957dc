import TrellisCore
import TrellisGraph
import TrellisJournal

/// Fetch results that make their objects lazily, a batch at a time, and keep them (one object per ID).
///
/// ```swift
/// for chore in try context.fetch(FetchDescriptor<Chore>(), batchSize: 200) where chore.done { … }
/// ```
public struct FetchResults<T: Model>: RandomAccessCollection {
    /// The IDs of every result, in order.
    public let identifiers: [ObjectID]
    let context: ModelContext
    let batchSize: Int
    private let batches = Batches()

    private final class Batches {
        var made: [Int: [T]] = [:]
    }

    init(identifiers: [ObjectID], context: ModelContext, batchSize: Int) {
        self.identifiers = identifiers
        self.context = context
        self.batchSize = batchSize
    }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of results.
    public var endIndex: Int { identifiers.count }

    /// - Complexity: O(1), or O(batchSize) when the batch holding `position` is read for the first time.
    public subscript(position: Int) -> T {
        let b = position / batchSize
        if let batch = batches.made[b] { return batch[position - b * batchSize] }
        let slice = identifiers[(b * batchSize)..<Swift.min(identifiers.count, (b + 1) * batchSize)]
        let batch = slice.map { context.materialize($0, as: T.self) }
        batches.made[b] = batch
        return batch[position - b * batchSize]
    }

    /// How many batches have been made so far.
    package var materializedBatches: Int { batches.made.count }
}

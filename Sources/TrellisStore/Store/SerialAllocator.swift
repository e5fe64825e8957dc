import Synchronization
import TrellisCore
import TrellisGraph
import TrellisJournal

/// Hands out permanent serial numbers, one counter per entity; shared by every transaction of a store.
///
/// The counters are atomics, not an array under a lock: a bulk insert takes a serial per object, and one atomic add
/// costs less than a lock, an array write (with its uniqueness check) and an unlock.
final class SerialAllocator: Sendable {
    /// `entities` counters, each the next serial of its entity; allocated and freed with the allocator, only ever
    /// reached through atomic operations.
    private nonisolated(unsafe) let next: UnsafeMutablePointer<Atomic<UInt64>>
    private let entities: Int

    init(after maxSerials: [UInt64]) {
        entities = maxSerials.count
        next = .allocate(capacity: max(entities, 1))
        for (i, m) in maxSerials.enumerated() { (next + i).initialize(to: Atomic(m + 1)) }
    }

    deinit {
        next.deinitialize(count: entities)
        next.deallocate()
    }

    func allocate(_ entity: UInt32, count: UInt64 = 1) -> UInt64 {
        precondition(Int(entity) < entities, "entity \(entity) is not in the schema")
        return next[Int(entity)].wrappingAdd(count, ordering: .relaxed).oldValue
    }

    /// Makes sure future serials stay above those a recovered or committed graph holds.
    func raise(to maxSerials: [UInt64]) {
        precondition(maxSerials.count <= entities, "more entities than the schema has")
        for (i, m) in maxSerials.enumerated() { next[i].max(m + 1, ordering: .relaxed) }
    }
}

import TrellisCore
import TrellisJournal

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// How each simulated operation is counted, recorded, and failed on demand.

extension SimulatedFileLayer.State {
    /// Counts and records an operation, then throws if the disk is dead, halted, or a fault aims at it.
    package mutating func begin(_ operation: SimulatedFileLayer.Operation, _ path: String) throws {
        _ = try check(operation, path)
    }

    /// As `begin`, but returns (instead of throwing) a fault that should tear a write: the fraction of its bytes to
    /// store and the error to throw after.
    package mutating func check(
        _ operation: SimulatedFileLayer.Operation, _ path: String
    ) throws -> (Double, TrellisError)? {
        guard !dead else { throw SimulatedFileLayer.error(EIO, operation.rawValue + " (after crash)", path) }
        operationCount += 1
        if recording { events.append(.init(operation: operation, path: path)) }
        if let limit = haltAfter, operationCount > limit {
            throw SimulatedFileLayer.error(EIO, operation.rawValue + " (halted)", path)
        }
        for i in faults.indices {
            let fault = faults[i]
            guard fault.operations.isEmpty || fault.operations.contains(operation),
                fault.pathContains.map({ path.contains($0) }) ?? true
            else { continue }
            faults[i].seen += 1
            let hit = fault.persistent ? faults[i].seen >= fault.nth : faults[i].seen == fault.nth
            guard hit else { continue }
            let error = SimulatedFileLayer.error(fault.error, operation.rawValue + " (injected)", path)
            if let fraction = fault.tearFraction, operation == .write { return (fraction, error) }
            throw error
        }
        return nil
    }
}

extension SimulatedFileLayer {
    package func fileOperation<R>(
        _ operation: Operation, _ path: String, _ body: (inout State) throws -> R
    ) throws -> R {
        try state.locked { s in
            try s.begin(operation, path)
            return try body(&s)
        }
    }

    /// Writes `bytes` at `offset` of `data`, growing it with zeros as a file grows.
    private static func write(_ bytes: ArraySlice<UInt8>, at offset: Int, into data: inout [UInt8]) {
        let end = offset + bytes.count
        if data.count < end { data.append(contentsOf: repeatElement(0, count: end - data.count)) }
        data.replaceSubrange(offset..<end, with: bytes)
    }

    package func writeOperation(_ node: Int, _ path: String, _ bytes: [UInt8], at offset: Int) throws {
        try state.locked { s in
            var count = bytes.count
            var failure: TrellisError?
            if let (fraction, error) = try s.check(.write, path) {
                count = Int(Double(bytes.count) * fraction)
                failure = error
            }
            guard s.nodes[node] != nil else { throw Self.error(ENOENT, "pwrite", path) }
            let end = offset + count
            // In place: a copy of the file out of the dictionary and back made every write cost the file's size.
            Self.write(bytes.prefix(count), at: offset, into: &s.nodes[node]!.current)
            if !s.nodes[node]!.cleanNotDurable.isEmpty {
                // Written again, those bytes are dirty again: the next successful sync makes them durable.
                for i in offset..<end { s.nodes[node]!.cleanNotDurable[i] = nil }
            }
            if let failure { throw failure }
        }
    }
}

import TrellisCore

extension SimulatedFileLayer {
    /// The disk as it would be found after a power cut now, as a new layer; this one fails every later operation,
    /// so threads of the store that "died" cannot touch the survivor.
    package func crash(_ policy: CrashPolicy = CrashPolicy()) -> SimulatedFileLayer {
        state.locked { s in
            s.dead = true
            var random = SeededRandom(seed: policy.data.seed)
            var next = State()
            for (path, directory) in s.directories.sorted(by: { $0.key < $1.key }) where directory.isDurable {
                let entries = policy.keepUnsyncedEntries ? directory.entries : directory.durableEntries
                var survivor = Directory(isDurable: true)
                for (name, node) in entries.sorted(by: { $0.key < $1.key }) {
                    guard let old = s.nodes[node] else { continue }
                    let data = Self.survivingData(old, policy.data, &random)
                    next.nodes[next.nextNode] = Node(current: data, synced: data)
                    survivor.entries[name] = next.nextNode
                    next.nextNode += 1
                }
                survivor.durableEntries = survivor.entries
                next.directories[path] = survivor
            }
            return SimulatedFileLayer(next)
        }
    }

    package static func survivingData(_ node: Node, _ policy: CrashPolicy.Data, _ random: inout SeededRandom) -> [UInt8]
    {
        let (synced, current) = (node.synced, node.current)
        if synced == current { return current }
        switch policy {
        case .dropUnsynced: return synced
        case .keepUnsynced: return current
        case .tearUnsynced:
            guard current.count > synced.count, current.starts(with: synced) else { return synced }
            return Array(current.prefix(synced.count + Int(random.next() % UInt64(current.count - synced.count + 1))))
        case .keepRandomSectors:
            let length =
                min(synced.count, current.count)
                + Int(random.next() % UInt64(abs(current.count - synced.count) + 1))
            var out = [UInt8](repeating: 0, count: length)
            var sector = 0
            while sector < length {
                let end = min(sector + sectorSize, length)
                let takeNew = random.next() & 1 == 0
                for i in sector..<end {
                    let source = takeNew ? current : synced
                    out[i] = i < source.count ? source[i] : (i < current.count ? current[i] : 0)
                }
                sector = end
            }
            return out
        case .keepSectorsIndependently:
            // The length is the written one: the extent was reserved (preallocated), so only its contents are in
            // doubt. Each sector with an unsynced byte survives whole or not at all, independently of the others.
            var out = current
            var sector = 0
            while sector < current.count {
                let end = min(sector + sectorSize, current.count)
                let dirty = (sector..<end).contains { $0 >= synced.count || current[$0] != synced[$0] }
                if dirty && random.next() & 1 == 0 {
                    for i in sector..<end { out[i] = i < synced.count ? synced[i] : 0 }
                }
                sector = end
            }
            return out
        case .garbleUnsyncedBytes:
            var out = current
            let sectors = stride(from: 0, to: current.count, by: sectorSize).filter { start in
                (start..<min(start + sectorSize, current.count)).contains {
                    $0 >= synced.count || current[$0] != synced[$0]
                }
            }
            guard let chosen = sectors.randomElement(using: &random) else { return out }
            for i in chosen..<min(chosen + sectorSize, out.count) where i >= synced.count || current[i] != synced[i] {
                out[i] = UInt8(truncatingIfNeeded: random.next())
            }
            return out
        case .garbleRandomSector:
            var out = current
            var dirty: [Int] = []
            var sector = 0
            while sector < current.count {
                let end = min(sector + sectorSize, current.count)
                if sector >= synced.count || current[sector..<end] != synced[sector..<min(end, synced.count)] {
                    dirty.append(sector)
                }
                sector = end
            }
            guard let chosen = dirty.randomElement(using: &random) else { return out }
            for i in chosen..<min(chosen + sectorSize, out.count) { out[i] = UInt8(truncatingIfNeeded: random.next()) }
            return out
        }
    }
}

extension SimulatedFileLayer.CrashPolicy.Data {
    package var seed: UInt64 {
        switch self {
        case .dropUnsynced, .keepUnsynced: return 0
        case .keepRandomSectors(let seed), .garbleRandomSector(let seed), .tearUnsynced(let seed),
            .garbleUnsyncedBytes(let seed), .keepSectorsIndependently(let seed):
            return seed
        }
    }
}

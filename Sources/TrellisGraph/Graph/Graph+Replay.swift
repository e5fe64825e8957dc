import TrellisCore

extension Graph {
    /// This graph under `schema.withoutIndexes()`, its index trees dropped: applying change sets to it writes rows
    /// and links only. Recovery replays a journal long next to its checkpoint this way and then builds each index
    /// once from the rows (`rebuildingIndexes`), instead of merging every record's entries into the trees.
    package func withoutIndexes() -> Graph {
        var out = Graph(schema: schema.withoutIndexes())
        out.sequence = sequence
        out.tables = tables
        for e in out.tables.indices { out.tables[e].indexes = [] }
        return out
    }

    /// This graph (one of `withoutIndexes`, or any graph of `schema`'s structure) with every index of `schema` built
    /// from its rows, as a checkpoint without stored orders loads them (`IndexBuilder`): streamed from the leaves in
    /// serial order when its keys grow with the serials, sorted otherwise. Each index is built apart from the others;
    /// every other one on the second core.
    package func rebuildingIndexes(_ schema: Schema) -> Graph {
        precondition(schema.fingerprint == self.schema.fingerprint, "rebuildingIndexes: another structure")
        var out = Graph(schema: schema)
        out.sequence = sequence
        out.tables = tables
        var jobs: [(entity: Int, index: Int)] = []
        var gathered: [(keys: [UInt64], leaves: [Leaf])] = []
        for (e, layout) in schema.layouts.enumerated() {
            out.tables[e].indexes = EntityTable(layout).indexes
            guard !layout.indexes.isEmpty, tables[e].count > 0 else {
                gathered.append(([], []))
                continue
            }
            var keys: [UInt64] = []
            var leaves: [Leaf] = []
            keys.reserveCapacity(tables[e].count / Leaf.width + 1)
            leaves.reserveCapacity(tables[e].count / Leaf.width + 1)
            tables[e].forEachLeaf { key, leaf in
                keys.append(key)
                leaves.append(leaf)
            }
            gathered.append((keys, leaves))
            for i in layout.indexes.indices { jobs.append((e, i)) }
        }
        let rows = gathered
        let empty = out.tables.map(\.indexes)
        let counts = tables.map(\.count)
        @Sendable func build(_ job: (entity: Int, index: Int)) -> IndexTree {
            let (e, i) = job
            let index = schema.layouts[e].indexes[i]
            let (keys, leaves) = rows[e]
            return IndexBuilder.streamedIndex(empty[e][i], index, keys: keys, leaves: leaves, count: counts[e])
                ?? IndexBuilder.sortedIndex(empty[e][i], index, keys: keys, leaves: leaves)
        }
        let (background, here) = (
            jobs.indices.filter { $0 % 2 == 1 }.map { jobs[$0] }, jobs.indices.filter { $0 % 2 == 0 }.map { jobs[$0] }
        )
        let work = background.isEmpty ? nil : BackgroundWork { background.map(build) }
        for job in here { out.tables[job.entity].indexes[job.index] = build(job) }
        for (job, tree) in zip(background, work?.wait() ?? []) { out.tables[job.entity].indexes[job.index] = tree }
        return out
    }
}

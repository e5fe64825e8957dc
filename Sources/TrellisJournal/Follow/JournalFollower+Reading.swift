import TrellisCore
import TrellisGraph

/// One step of a follower: how far is durable, and the records up to there.
extension JournalFollower {
    /// Applies every record through the durable target (the writer's mark, or the manifest's durable sequence when
    /// there is no mark to trust) and returns them as commits: none when `initial` (the open publishes the graph), and
    /// none when the step ends in a refresh (`refreshDue`: a migration read, a jump over a compaction, or a store shown
    /// migrated in memory). When the segment after the one read was removed by a compaction, an open fails (and is
    /// tried again) and a later step jumps to the checkpoint that replaced it.
    func advance(_ s: inout State, initial: Bool) throws -> [Commit] {
        try refreshManifest(&s)
        var target = s.manifest.durableSequence
        let mark = DurableMark.read(layer, directory: directory)
        // A mark naming a segment the follower holds under another salt is from another life of the directory.
        if let mark, !holds(s, segment: mark.segment, otherThan: mark.salt) { target = max(target, mark.sequence) }
        if target < s.graph.sequence, let mark, mark.sequence < s.graph.sequence,
            s.manifest.durableSequence < s.graph.sequence
        {
            throw TrellisError(
                .failed,
                "\(directory): the store went back to record \(max(mark.sequence, s.manifest.durableSequence)) after "
                    + "this follower showed record \(s.graph.sequence) (a salvage or a restore); open it again")
        }
        var commits: [Commit] = []
        while s.graph.sequence < target, var segment = s.current {
            // In the mark's segment nothing past its offset is read: the space reserved after it is zeros to skip.
            // (Not when the manifest claims more than the mark: an older build writes the store and not the mark.)
            let end = mark.flatMap {
                $0.sequence >= target && $0.segment == segment.id && $0.salt == segment.salt
                    ? Int(clamping: $0.offset) : nil
            }
            // Commits are collected only to be published one by one: not at open, nor when the step ends in a refresh
            // (a version migrated in memory, or a migration read; a migrated version is never shared, so in place).
            let stopped = try read(
                &segment, upTo: end, through: target, into: &s.graph, commits: &commits,
                collect: !initial && !s.refreshDue && s.inMemoryFrom == nil, refreshDue: &s.refreshDue)
            if s.refreshDue { commits = [] }
            s.current = segment
            if s.graph.sequence >= target { break }
            // A durable record in the mark's segment before its offset that does not read is damage, not a record
            // being written.
            if let stopped, let mark, mark.segment == segment.id, stopped < Int(clamping: mark.offset) {
                throw TrellisError(
                    .corrupt,
                    "\(directory)/\(segment.name) at offset \(stopped): a record the writer made durable does not read")
            }
            // Nothing more is durable here: the next record is in the next segment (made before any record goes in).
            let found: Segment?
            do {
                found = try nextSegment(after: segment.id, &s)
            } catch let behind as FellBehind {
                // At open, the open starts again; later, the follower loads what replaced the segments it missed.
                guard !initial else { throw TrellisError(.io, behind.message) }
                try jump(&s)
                return []
            }
            guard let next = found else { break }
            guard next.firstSequence == s.graph.sequence + 1 else {
                throw TrellisError(
                    .corrupt,
                    "\(directory)/\(next.name): starts at record \(next.firstSequence) where \(s.graph.sequence + 1) was "
                        + "due")
            }
            segment.file.close()
            s.current = next
        }
        return commits
    }

    /// Reads frames of `segment` from its offset, before `end` (nil: the end of the file), while they are records
    /// through `target`; returns the offset of damage that stopped it (nil: the end, reserved zeros, or the target).
    private func read(
        _ segment: inout Segment, upTo end: Int?, through target: UInt64, into graph: inout Graph,
        commits: inout [Commit], collect: Bool, refreshDue: inout Bool
    ) throws -> Int? {
        let size = try segment.file.size()
        var scanner = FrameScanner(
            segment.file, name: segment.name, size: min(size, end ?? size), salt: segment.salt, otherSalts: [],
            knownTypes: [RecordType.changeSet.rawValue, RecordType.migration.rawValue], version: segment.version)
        while graph.sequence < target {
            switch try scanner.step(at: segment.offset) {
            case .end:
                return nil
            case .damage(let kind, _):
                if kind == .zeroed, try scanner.isZero(from: segment.offset) { return nil }
                return segment.offset
            case .frame(let frame):
                if frame.header.type & RecordType.ignorableBit != 0 {
                    segment.offset += frame.extent
                    continue
                }
                let sequence = frame.header.sequence
                let context = "\(directory)/\(segment.name) record \(sequence) at offset \(frame.offset)"
                guard sequence == graph.sequence + 1 else {
                    throw TrellisError(.corrupt, "\(context): record \(graph.sequence + 1) was due")
                }
                let payload = try frame.payload(file: segment.name)
                if frame.header.type == RecordType.migration.rawValue {
                    // Shown as a refresh once the step has read what is durable (or refused, if this follower's
                    // model is not the new schema).
                    refreshDue = true
                    let migration = try MigrationRecord.decode(payload, base: graph.schema, context: context)
                    guard migration.from == graph.schema.fingerprint, migration.to == segment.schema.fingerprint else {
                        throw TrellisError(.corrupt, "\(context): a migration from another schema")
                    }
                    graph = try migration.apply(to: graph, sequence: sequence)
                    // The segment's header holds the new schema with its migration history (as an open reads it).
                    if segment.schema.fingerprint == graph.schema.fingerprint {
                        graph = graph.withSchema(segment.schema)
                    }
                } else {
                    guard segment.schema.fingerprint == graph.schema.fingerprint else {
                        throw TrellisError(.corrupt, "\(context): written with another schema than the store's")
                    }
                    let (changes, author) = try ChangeSetCodec.decodeRecord(
                        payload, schema: graph.schema, context: context, version: segment.version)
                    if !collect {
                        try graph.apply(changes, sequence: sequence)
                    } else {
                        // The version published before stays as it is: readers may hold it.
                        graph = try graph.applying(changes, sequence: sequence)
                        commits.append(
                            Commit(
                                sequence: sequence, changes: changes, snapshot: graph, author: author,
                                time: RecordFrame.date(frame.header.time)))
                    }
                }
                segment.offset += frame.extent
            }
        }
        return nil
    }

    /// The segment after `id`: opened ahead, or now. Nil when it is not there yet; throws when a compaction removed
    /// it before the follower could open it.
    private func nextSegment(after id: UInt64, _ s: inout State) throws -> Segment? {
        if let next = s.ahead.removeValue(forKey: id + 1) { return next }
        do {
            return try Self.openSegment(layer: layer, directory: directory, id: id + 1)
        } catch let error as TrellisError where error.code == .io {
            try refreshManifest(&s)
            guard s.manifest.firstSegment > id + 1 else { return nil }
            throw FellBehind(
                message: "\(directory): the segment after record \(s.graph.sequence) was removed by a compaction")
        }
    }

    /// A compaction removed the segment the follower was to read next.
    struct FellBehind: Error {
        let message: String
    }

    /// Replaces the follower's files and graph with what a compaction it missed left: the checkpoint the manifest
    /// names, loaded as an open loads it, and the records after it through the durable mark. The step then publishes
    /// the new version as a refresh. A store that went back (a restore) stops the follower as a step does.
    private func jump(_ s: inout State) throws {
        let fresh = try Self.retrying(layer: layer, directory: directory) {
            var state = try Self.load(layer: layer, directory: directory)
            try Self.read(&state, layer: layer, directory: directory)
            return state
        }
        guard fresh.graph.sequence >= s.graph.sequence else {
            Self.close(fresh)
            throw TrellisError(
                .failed,
                "\(directory): the store went back to record \(fresh.graph.sequence) after this follower showed record "
                    + "\(s.graph.sequence) (a salvage or a restore); open it again")
        }
        Self.close(s)
        s.graph = fresh.graph
        s.current = fresh.current
        s.ahead = fresh.ahead
        s.manifest = fresh.manifest
        s.manifestBytes = fresh.manifestBytes
        s.refreshDue = true
    }

    /// Reads the manifest; when it changed, opens the segments it names that the follower has not opened yet.
    private func refreshManifest(_ s: inout State) throws {
        let bytes = try layer.readWhole(
            joinPath(directory, JournalFormat.manifestName), limit: JournalFormat.maxHeaderBytes)
        guard bytes != s.manifestBytes else { return }
        s.manifest = try Manifest.parse(bytes, file: JournalFormat.manifestName)
        s.manifestBytes = bytes
        let known = max(s.current?.id ?? 0, s.ahead.keys.max() ?? 0)
        guard s.manifest.lastSegment > known else { return }
        for id in max(known + 1, s.manifest.firstSegment)...s.manifest.lastSegment {
            // One that cannot be opened now is opened when it is needed (or found removed then).
            if let segment = try? Self.openSegment(layer: layer, directory: directory, id: id) { s.ahead[id] = segment }
        }
    }

    /// Whether the follower holds segment `id` under a salt other than `salt`.
    private func holds(_ s: State, segment id: UInt64, otherThan salt: UInt64) -> Bool {
        if let current = s.current, current.id == id { return current.salt != salt }
        if let ahead = s.ahead[id] { return ahead.salt != salt }
        return false
    }
}

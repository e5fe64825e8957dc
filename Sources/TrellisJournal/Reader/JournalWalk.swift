import TrellisCore
import TrellisGraph

/// Walks the journal segments a manifest names, in order, checking every frame and the chain of sequence numbers,
/// and hands each valid change-set record to the caller. Damage is reported as `JournalProblem`s; whether to stop
/// at the first one or skip to the next valid frame is the caller's choice (`continueAfterDamage`).
///
/// A damaged frame in the last segment with no valid frame anywhere after it is classified `.tornTail`: what a
/// crash in the middle of an append leaves, unless it is a whole record that only rot explains (`.rot`). Damage followed by a valid frame, or in any earlier segment, keeps its
/// own class (checksum, length, zeroed, …): that is corruption, not a crash.
package struct JournalWalk {
    /// A valid record, in sequence, handed to the caller.
    struct Record {
        var frame: Frame
        var file: String
        /// The header of the segment the record is in (its schema is the one the record was written with).
        var header: FileHeader
    }

    /// Where the valid part of the last segment ends, and what follows it.
    package struct Tail {
        var segment: UInt64
        var name: String
        var header: FileHeader
        var validEnd: Int
        var size: Int
        /// Where the records the manifest's durable sequence covers end in this segment (its header's end when it
        /// covers none of them): the bytes from here to `validEnd` were read, maybe from the page cache, and are not
        /// known to be on disk.
        var durableEnd: Int
    }

    /// What a walk found: the problems, the last sequence number applied, the last segment's valid end.
    struct Outcome {
        var problems: [JournalProblem] = []
        var lastSequence: UInt64
        var records = 0
        /// Valid records after an unacknowledged hole (`JournalProblem.Kind.unacknowledgedHole`), dropped with it.
        var holeRecords = 0
        var tail: Tail?
        /// Bytes of all segments walked.
        var bytes = 0
    }

    let layer: any FileLayer
    let directory: String
    let manifest: Manifest
    let files: StoreFiles
    var continueAfterDamage: Bool

    /// Walks records after `checkpointSequence`; `onRecord` returns a problem when a valid frame does not decode or
    /// apply (then it counts as damage too). A journal that ends before the manifest's durable sequence has a
    /// vanished tail, reported last (after any torn tail, which then is no crash artefact either).
    func walk(
        after checkpointSequence: UInt64, onRecord: (Record) throws -> JournalProblem?
    ) throws -> Outcome {
        var outcome = try walkSegments(after: checkpointSequence, onRecord: onRecord)
        let endsEarly = outcome.lastSequence < manifest.durableSequence
        // Other damage already explains records that are not there.
        if endsEarly && outcome.problems.allSatisfy({ $0.kind == .tornTail || $0.kind == .unacknowledgedHole }) {
            let missing = manifest.durableSequence - outcome.lastSequence
            outcome.problems.append(
                JournalProblem(
                    .vanishedTail, file: outcome.tail?.name ?? JournalFormat.segmentName(manifest.lastSegment),
                    offset: outcome.tail?.validEnd ?? 0,
                    "the journal ends after record \(outcome.lastSequence); the manifest (generation "
                        + "\(manifest.generation)) says records through \(manifest.durableSequence) were durable: "
                        + "\(missing) record\(missing == 1 ? " is" : "s are") missing"))
        }
        return outcome
    }

    private func walkSegments(
        after checkpointSequence: UInt64, onRecord: (Record) throws -> JournalProblem?
    ) throws -> Outcome {
        var outcome = Outcome(lastSequence: checkpointSequence)
        var headers: [UInt64: FileHeader] = [:]
        var sizes: [UInt64: Int] = [:]
        // Only the segments that are there are walked, and each run of missing ones is one problem: a damaged
        // manifest can name billions.
        let present = files.segments.keys.filter { (manifest.firstSegment...manifest.lastSegment).contains($0) }
            .sorted()
        var nextID = manifest.firstSegment
        // Headers first: every segment's salt is needed to tell a stale frame from plain damage.
        for id in present + [manifest.lastSegment + 1] {
            if id > nextID {
                let missing = id - nextID == 1 ? "segment \(nextID)" : "segments \(nextID)…\(id - 1)"
                outcome.problems.append(
                    JournalProblem(
                        .missingFile, file: JournalFormat.segmentName(nextID), offset: 0,
                        "the manifest names \(missing), which is not in the directory"))
                if !continueAfterDamage { return outcome }
            }
            nextID = id + 1
            guard id <= manifest.lastSegment, let name = files.segments[id] else { continue }
            let file = try layer.open(joinPath(directory, name), .read)
            defer { file.close() }
            let size = try file.size()
            sizes[id] = size
            do {
                headers[id] = try readSegmentHeader(file, name: name, size: size)
            } catch let error as TrellisError where error.code == .corrupt {
                outcome.problems.append(JournalProblem(.header, file: name, offset: 0, error.message))
                if !continueAfterDamage { return outcome }
            }
        }
        let salts = headers.values.map(\.salt)
        var expected = checkpointSequence &+ 1
        for id in present {
            guard let header = headers[id], let name = files.segments[id], let size = sizes[id] else { continue }
            let isLast = id == manifest.lastSegment
            outcome.bytes += size
            if header.sequence != expected {
                outcome.problems.append(
                    JournalProblem(
                        .sequenceGap, file: name, offset: 24,
                        "the segment starts at sequence \(header.sequence); the journal before it ends at \(expected &- 1)"
                    ))
                if !continueAfterDamage { return outcome }
                expected = header.sequence
            }
            let file = try layer.open(joinPath(directory, name), .read)
            defer { file.close() }
            var scanner = FrameScanner(
                file, name: name, size: size, salt: header.salt, otherSalts: salts,
                knownTypes: [RecordType.changeSet.rawValue, RecordType.migration.rawValue], version: header.version)
            var offset = header.encoded().count
            var validEnd = offset
            var durableEnd = offset
            // Records lost in a skipped damaged range leave a gap that the damage already explains.
            var skippedDamage = false
            scan: while true {
                switch try scanner.step(at: offset) {
                case .end:
                    break scan
                case .damage(let kind, var message):
                    // Zeros from here to the end of the file are space the writer reserved for records it has not
                    // written (`preallocate`): this segment ends here. Segments are never cut back (a reader may be
                    // reading one), so a closed segment keeps its zeros; nothing is lost unseen, because the next
                    // segment must start with the sequence number after this one's last record.
                    if kind == .zeroed, try scanner.isZero(from: offset) { break scan }
                    let resume = try scanner.nextValidFrame(after: offset)
                    if let resume, isLast, outcome.problems.isEmpty, expected > manifest.durableSequence,
                        header.version >= FrameHeader.watermarkVersion, [.checksum, .length, .zeroed].contains(kind)
                    {
                        let hole = try Self.hole(&scanner, after: resume, missing: expected)
                        if case .unacknowledged(let records, let watermark) = hole {
                            let highest = watermark.map { "at most \($0)" } ?? "none"
                            outcome.problems.append(
                                JournalProblem(
                                    .unacknowledgedHole, file: name, offset: offset,
                                    "\(message), and \(records) valid record\(records == 1 ? "" : "s") after it, all "
                                        + "written before record \(expected) was durable (their watermarks: "
                                        + "\(highest)): nothing from here to the end (\(size - offset) bytes) was "
                                        + "acknowledged"))
                            outcome.holeRecords = records
                            break scan
                        }
                        if case .acknowledged(let sequence, let at, let watermark) = hole {
                            message +=
                                "; record \(sequence) at offset \(at) was written when record \(watermark) was "
                                + "durable (its watermark), so record \(expected), lost here, had been acknowledged"
                        }
                    }
                    if resume == nil && isLast && !scanner.resyncGaveUp, kind == .checksum || kind == .length,
                        let why = try scanner.rot(at: scanner.damagedFrame)
                    {
                        outcome.problems.append(JournalProblem(.rot, file: name, offset: offset, why))
                        break scan
                    }
                    if resume == nil && isLast && !scanner.resyncGaveUp {
                        outcome.problems.append(
                            JournalProblem(
                                .tornTail, file: name, offset: offset,
                                "\(message); nothing valid follows (\(size - offset) bytes to the end)"))
                        break scan
                    }
                    let follows =
                        resume.map { "; a valid record follows at offset \($0)" }
                        ?? (scanner.resyncGaveUp
                            ? "; the search for a valid record after it gave up (it hashed \(scanner.resyncHashed) bytes)"
                            : "")
                    outcome.problems.append(JournalProblem(kind, file: name, offset: offset, message + follows))
                    guard continueAfterDamage, let resume else { break scan }
                    offset = resume
                    skippedDamage = true
                case .frame(let frame):
                    let frameEnd = offset + frame.extent
                    if frame.header.type & RecordType.ignorableBit != 0 {
                        offset = frameEnd
                        validEnd = offset
                        continue
                    }
                    if frame.header.sequence != expected && !skippedDamage {
                        outcome.problems.append(
                            JournalProblem(
                                .sequenceGap, file: name, offset: offset,
                                "record \(frame.header.sequence) where \(expected) was due"))
                        guard continueAfterDamage else { break scan }
                        // A record from the past (a duplicate, a stale copy) or from beyond any real store is
                        // skipped: applying it would move the sequence backwards, or to where `+ 1` traps.
                        if frame.header.sequence < expected || frame.header.sequence >= 1 << 60 {
                            offset = frameEnd
                            validEnd = offset
                            continue
                        }
                    }
                    expected = frame.header.sequence &+ 1
                    skippedDamage = false
                    if let problem = try onRecord(Record(frame: frame, file: name, header: header)) {
                        outcome.problems.append(problem)
                        guard continueAfterDamage else { break scan }
                    } else {
                        outcome.records += 1
                        outcome.lastSequence = frame.header.sequence
                        if frame.header.sequence <= manifest.durableSequence { durableEnd = frameEnd }
                    }
                    offset = frameEnd
                    validEnd = offset
                }
            }
            if isLast {
                outcome.tail = Tail(
                    segment: id, name: name, header: header, validEnd: validEnd, size: size,
                    durableEnd: min(durableEnd, validEnd))
            }
            if !continueAfterDamage, !outcome.problems.isEmpty { return outcome }
        }
        return outcome
    }

    /// What the valid frames after damage at a hole say about it (format version 6 on: each frame's watermark names
    /// the last record durable when it was written).
    enum Hole {
        /// Every valid frame after the hole was written before the first record missing there was durable, so none
        /// of the records from the hole on was ever acknowledged: `records` valid ones follow, with at most
        /// `watermark` (nil: none of them) as the highest watermark.
        case unacknowledged(records: Int, watermark: UInt64?)
        /// The frame at `offset`, record `sequence`, was written when record `watermark` (at least the missing one)
        /// was durable: acknowledged data is gone.
        case acknowledged(sequence: UInt64, offset: Int, watermark: UInt64)
        /// A valid frame after it that no writer writes there (a sequence number at or before the hole), or the
        /// search for valid frames gave up: not a hole point-in-time recovery may drop.
        case unexplained
    }

    /// Reads every valid frame from `resume` (the first valid one after damage) to the end of the file and judges
    /// the hole in front of them, where record `missing` was due.
    static func hole(_ scanner: inout FrameScanner, after resume: Int, missing: UInt64) throws -> Hole {
        var offset = resume
        var records = 0
        var highest: UInt64?
        while true {
            switch try scanner.step(at: offset) {
            case .end:
                return .unacknowledged(records: records, watermark: highest)
            case .frame(let frame):
                offset += frame.extent
                if frame.header.type & RecordType.ignorableBit != 0 { continue }
                guard frame.header.sequence >= missing else { return .unexplained }
                if frame.header.watermark >= missing {
                    return .acknowledged(
                        sequence: frame.header.sequence, offset: frame.offset, watermark: frame.header.watermark)
                }
                records += 1
                highest = max(highest ?? 0, frame.header.watermark)
            case .damage(let kind, _):
                if kind == .zeroed, try scanner.isZero(from: offset) {
                    return .unacknowledged(records: records, watermark: highest)
                }
                guard let next = try scanner.nextValidFrame(after: offset) else {
                    return scanner.resyncGaveUp ? .unexplained : .unacknowledged(records: records, watermark: highest)
                }
                offset = next
            }
        }
    }
}

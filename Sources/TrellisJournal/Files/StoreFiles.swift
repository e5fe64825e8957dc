import TrellisCore
import TrellisGraph

/// The files of a store directory, sorted by what their names say they are.
package struct StoreFiles {
    var manifest: Manifest?
    /// Why the manifest could not be read, when there is one that fails its checks.
    var manifestProblem: String?
    package var segments: [UInt64: String] = [:]
    package var checkpoints: [UInt64: String] = [:]
    package var temporaries: [String] = []
    /// Files kept under a `*.damaged` name by repair or salvage (never removed by the library), sorted.
    package var damaged: [String] = []
    var hasManifestFile = false
    /// The `HISTORY` file (format version 7): the store's id, the history kept beyond the manifest's journal and the
    /// consumers' acknowledgements; nil when there is none.
    package var history: HistoryFile?

    package static func list(_ layer: any FileLayer, _ directory: String) throws -> StoreFiles {
        var files = StoreFiles()
        for name in try layer.list(directory) {
            if name.contains(JournalFormat.damagedSuffix) {
                files.damaged.append(name)
            } else if name.hasSuffix(JournalFormat.temporarySuffix) {
                files.temporaries.append(name)
            } else if let id = JournalFormat.segmentID(name) {
                files.segments[id] = name
            } else if let sequence = JournalFormat.checkpointSequence(name) {
                files.checkpoints[sequence] = name
            } else if name == JournalFormat.manifestName {
                files.hasManifestFile = true
            } else if name == HistoryFile.name {
                // A history file that does not check out refuses the store: the files it keeps would otherwise look
                // unreferenced, and be removed.
                files.history = try HistoryFile.parse(
                    try layer.readWhole(joinPath(directory, name), limit: HistoryFile.maxBytes))
            }
        }
        if files.hasManifestFile {
            do {
                let bytes = try layer.readWhole(
                    joinPath(directory, JournalFormat.manifestName), limit: JournalFormat.maxHeaderBytes)
                files.manifest = try Manifest.parse(bytes, file: JournalFormat.manifestName)
            } catch let error as TrellisError where error.code == .corrupt {
                files.manifestProblem = error.message
            }
        }
        files.temporaries.sort()
        files.damaged.sort()
        return files
    }

    /// Files of the store's kinds that the manifest does not reference: left by a crash during rotation or
    /// compaction, or by a compaction that had not yet deleted what it replaced.
    /// The segments and checkpoints the history file keeps (retained history) count as referenced.
    package func unreferenced(by manifest: Manifest) -> [String] {
        var names = temporaries
        let firstKept = min(history?.firstKeptSegment ?? manifest.firstSegment, manifest.firstSegment)
        let keptCheckpoints = history?.keptCheckpoints ?? []
        for (id, name) in segments where id < firstKept || id > manifest.lastSegment { names.append(name) }
        for (sequence, name) in checkpoints
        where sequence != manifest.checkpointSequence && !keptCheckpoints.contains(sequence) {
            names.append(name)
        }
        return names.sorted()
    }
}

/// Reads the header of the segment `name`, checking it whole; throws `.corrupt` for a bad one.
func readSegmentHeader(_ file: any LayerFile, name: String, size: Int) throws -> FileHeader {
    let prefix = try file.read(at: 0, count: min(size, 16))
    guard let length = FileHeader.length(prefix, magic: JournalFormat.segmentMagic), length <= size else {
        throw TrellisError(.corrupt, "\(name): not a Trellis segment, or its header is truncated")
    }
    let header = try FileHeader.parse(
        try file.read(at: 0, count: length), magic: JournalFormat.segmentMagic, file: name)
    // A segment copied or renamed into another's place reads as the wrong part of the journal.
    if let named = JournalFormat.segmentID(name), named != header.id {
        throw TrellisError(.corrupt, "\(name): the header names segment \(header.id), not \(named)")
    }
    return header
}

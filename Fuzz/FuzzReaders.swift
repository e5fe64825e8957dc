import Foundation
import TrellisTestSupport

@testable import TrellisCore
@testable import TrellisGraph
@testable import TrellisJournal
@testable import TrellisStore

/// Feeds one fuzz input to the readers: the manifest parser, the checkpoint loader, the segment walk (through
/// `JournalReader` and recovery under every policy), or a whole store directory, which is also opened for writing
/// (salvage rewrites it) on a simulated disk. Every outcome but a crash, a hang or a huge allocation is fine.
enum FuzzReaders {
    static let directory = "/store"

    static func run(_ input: FuzzInput) {
        var body = input.body
        switch input.target {
        case .manifest:
            if input.fixChecksums { FuzzChecksums.fixManifest(&body) }
            _ = try? Manifest.parse(body, file: JournalFormat.manifestName)
        case .checkpoint:
            if input.fixChecksums { FuzzChecksums.fixFile(&body) }
            let disk = SimulatedFileLayer()
            let name = FuzzInput.name(4, body)
            write(disk, [(name, body)])
            readCheckpoint(disk, name)
        case .segment:
            if input.fixChecksums { FuzzChecksums.fixFile(&body) }
            let disk = SimulatedFileLayer()
            let manifest = Manifest(
                generation: 1, fingerprint: fingerprint(body), checkpointSequence: 0, checkpointBytes: 0,
                firstSegment: 1, lastSegment: 1, durableSequence: 0)
            write(disk, [(JournalFormat.manifestName, manifest.encoded()), (JournalFormat.segmentName(1), body)])
            readStore(disk, openForWriting: false)
        case .directory:
            var files = input.files()
            for i in files.indices {
                if input.fixChecksums {
                    if files[i].name == JournalFormat.manifestName {
                        FuzzChecksums.fixManifest(&files[i].bytes)
                    } else {
                        FuzzChecksums.fixFile(&files[i].bytes)
                    }
                }
            }
            let disk = SimulatedFileLayer()
            write(disk, files)
            readStore(disk, openForWriting: true)
        }
    }

    static func write(_ disk: SimulatedFileLayer, _ files: [(name: String, bytes: [UInt8])]) {
        try? disk.createDirectory(directory)
        for (name, bytes) in files {
            guard let file = try? disk.open(joinPath(directory, name), .create) else { continue }
            try? file.write(bytes, at: 0)
            try? file.sync()
        }
        try? disk.syncDirectory(directory)
    }

    /// The fingerprint in a file's header (bytes 40..<48), or 0.
    static func fingerprint(_ b: [UInt8]) -> UInt64 { b.count >= 48 ? FuzzChecksums.get64(b, 40) : 0 }

    static func readCheckpoint(_ disk: SimulatedFileLayer, _ name: String) {
        guard let file = try? disk.open(joinPath(directory, name), .read) else { return }
        defer { file.close() }
        guard let size = try? file.size(), let header = try? Checkpoint.header(file, name: name, size: size),
            let schema = try? SchemaCodec.decode(header.schemaBytes, context: name)
        else { return }
        _ = try? Checkpoint.load(file, name: name, schema: schema)
    }

    static func readStore(_ disk: SimulatedFileLayer, openForWriting: Bool) {
        let reader = JournalReader(path: directory, layer: disk)
        _ = try? reader.manifest()
        _ = try? reader.verify()
        _ = try? reader.forEachRecord { _ in }
        guard let schema = try? reader.schema() else { return }
        for policy in [StoreOptions.Recovery.strict, .tolerateTornTail, .salvage] {
            let recovery = StoreRecovery(
                layer: disk, directory: directory, policy: policy, readOnly: true)
            _ = try? recovery.run()
        }
        guard openForWriting else { return }
        var options = StoreOptions(recovery: .salvage, compaction: .manual)
        options.fileLayer = disk
        if let store = try? Store(directory: URL(fileURLWithPath: directory), schema: schema, options: options) {
            try? store.close()
        }
    }
}

import TrellisCore
import TrellisGraph

/// The durable mark's file, held by the journal from `start` to close.
struct DurableMarkFile: Sendable {
    var file: (any LayerFile)?
    /// The mark the file holds (nil: none written by this journal yet).
    var written: DurableMark?
}

/// The writer's side of following: after each sync the flusher rewrites the small `DURABLE` file in place with where
/// the synced records end (`DurableMark`), so that followers in other processes read only durable records.
///
/// One `pwrite` of 56 bytes at offset 0, right after the sync and before the acknowledgements, never synced: followers on this machine read it from the page cache, which
/// every process shares, and after a power cut whatever the disk holds of it is a mark that was true when it was
/// written (each is written only after the sync it reports), a torn one fails its checksum, and the next writable
/// open writes a new one before it serves. A failed write is a warning, not a failure: followers then lag (they fall
/// back to the manifest's durable sequence), and nothing the store promises changes.
extension Journal {
    func openDurableMark() {
        let file = layer.openDurableMark(joinPath(directory, DurableMark.fileName))
        durableMarkFile.locked { $0.file = file }
        writeDurableMark()
    }

    /// Writes the mark of the last sync, unless the file holds it already.
    func writeDurableMark() {
        let mark = writer.locked { $0.durable }
        let failed = durableMarkFile.locked { m -> (any Error)? in
            guard let file = m.file, m.written != mark else { return nil }
            do {
                try file.write(mark.encoded(), at: 0)
                m.written = mark
                return nil
            } catch {
                file.close()
                m.file = nil
                return error
            }
        }
        if let failed {
            warn("the durable mark for followers could not be written (followers fall back to the manifest)", failed)
        }
    }

    func closeDurableMark() {
        durableMarkFile.locked { m in
            m.file?.close()
            m.file = nil
        }
    }
}

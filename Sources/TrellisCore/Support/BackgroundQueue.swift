import Dispatch
import Foundation
import Synchronization

/// Where `BackgroundWork` runs. With four cores or more, anywhere at once; with fewer, one piece after another on one
/// thread: the commit's own thread keeps a core to itself, where two pieces at once (a big insert encodes and builds
/// indexes) would share both cores three ways and slow down the thread that waits for them.
package enum BackgroundQueue {
    package static let queue =
        ProcessInfo.processInfo.activeProcessorCount >= 4
        ? DispatchQueue.global(qos: .userInitiated) : DispatchQueue(label: "trellis.commit-work", qos: .userInitiated)
}

import Dispatch
import Foundation

/// SIGINT and SIGTERM, caught for a command that runs until interrupted (`publish`, `replica`): it looks at its work
/// between waits, and ends cleanly (closing its store) when either signal arrives.
final class Interruption {
    private let arrived = DispatchSemaphore(value: 0)
    private var sources: [any DispatchSourceSignal] = []

    init() {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [arrived] in arrived.signal() }
            source.resume()
            sources.append(source)
        }
    }

    deinit {
        for source in sources { source.cancel() }
    }

    /// Waits up to `milliseconds` for a signal: true when one arrived.
    func wait(milliseconds: Int) -> Bool {
        arrived.wait(timeout: .now() + .milliseconds(milliseconds)) == .success
    }
}

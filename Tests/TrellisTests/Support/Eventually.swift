import Foundation

/// Waits, polling every millisecond, until `condition` holds or `seconds` pass; returns whether it held. Tests
/// `#expect` the result, so a wait that runs out fails the test instead of hanging it or passing unseen.
func eventually(within seconds: Double = 30, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        if try condition() { return true }
        if Date() >= deadline { return false }
        usleep(1_000)
    }
}

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

/// `eventually` for a condition that waits on its own actor (the view context's deliveries run on the main actor):
/// it polls between suspensions, so the actor runs meanwhile, where `eventually` would block it.
func eventuallyYielding(
    within seconds: Double = 30, isolation: isolated (any Actor)? = #isolation, _ condition: () throws -> Bool
) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        if try condition() { return true }
        if Date() >= deadline { return false }
        try? await Task.sleep(nanoseconds: 1_000_000)
    }
}

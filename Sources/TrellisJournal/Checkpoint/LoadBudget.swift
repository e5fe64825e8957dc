import Foundation
import TrellisCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The memory a checkpoint load may fill, charged as chunks are decoded and before their largest allocations.
///
/// A checkpoint's bytes do not bound what it loads into: consecutive serials and a column of one repeated value cost
/// no bytes a row, and text of a one-letter alphabet no bits a character, so a few megabytes of valid chunks can
/// describe more objects and text than any machine holds. Each chunk is bounded (4,159 rows, 16 MiB of packed text),
/// but not their number. The load charges an estimate of what each chunk will occupy in the graph, and refuses with
/// `TrellisError.Code.tooLarge` once the total passes what this process can hold, instead of failing an allocation (a
/// trap) or running for minutes first. The estimate is low on purpose (48 bytes an object plus 16 a value or
/// relationship, the text, 8 bytes a target; the benchmark's objects of 9 values and ends take about 190 bytes
/// loaded, and this charges them 192), so that a store that fits is never refused; the limit is half of what the
/// process may use, leaving the rest for what the estimate leaves out.
final class LoadBudget {
    /// The most bytes the load may charge.
    let limit: Int
    /// Bytes charged so far.
    private(set) var charged = 0
    private let file: String

    init(limit: Int = LoadBudget.processLimit / 2, file: String) {
        self.limit = limit
        self.file = file
    }

    /// The bytes this process may use: its address-space limit (`ulimit -v`) when one is set, else the machine's
    /// memory, whichever is less, less 256 MiB for the process itself.
    static var processLimit: Int {
        var limit = Int(clamping: ProcessInfo.processInfo.physicalMemory)
        var r = rlimit()
        #if canImport(Glibc)
        let got = getrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &r)
        let infinite = rlim_t.max  // RLIM_INFINITY, which does not import
        #else
        let got = getrlimit(RLIMIT_AS, &r)
        let infinite = RLIM_INFINITY
        #endif
        if got == 0 && r.rlim_cur != infinite { limit = min(limit, Int(clamping: r.rlim_cur)) }
        return max(0, limit - (256 << 20))
    }

    /// What a loaded object of an entity with `values` attributes and `ends` relationships occupies at least.
    static func objectBytes(values: Int, ends: Int) -> Int { 48 + 16 * (values + ends) }

    /// Adds `bytes` (`what`, for the message) to the charge; throws once the total passes the limit.
    func charge(_ bytes: Int, _ what: @autoclosure () -> String) throws {
        try require(Double(charged) + Double(bytes), what())
        charged += bytes
    }

    /// Throws unless `total` bytes are within the limit (charging nothing).
    func require(_ total: Double, _ what: @autoclosure () -> String) throws {
        guard total <= Double(limit) else {
            throw TrellisError(
                .tooLarge,
                "\(file) would take more than \(Self.megabytes(limit)) loaded, the most a load may take in this "
                    + "process (half of its address-space limit or of the machine's memory); stopped at \(what())")
        }
    }

    private static func megabytes(_ bytes: Int) -> String { "\(bytes >> 20) MiB" }
}

import Foundation
import Testing

@testable import TrellisCore
@testable import TrellisJournal

#if canImport(Glibc)
import Glibc
#endif

/// Every empty array in the process shares one object of the standard library, `_swiftEmptyArrayStorage`, which any
/// thread may read at any time. `Array(unsafeUninitializedCapacity: 0)` stores its count (a zero over the zero) into
/// that object: a write racing every such read, which ThreadSanitizer reported between a read-only open decoding an
/// empty ints block of a checkpoint and a writer encoding a commit with no deletes. Each test runs in a child process
/// that makes the object's page read-only around the code it checks, so a write there kills the child.
@Suite struct SharedEmptyArrayTests {
    /// An ints block of no values (base 0, width 0), as a checkpoint holds for an empty column.
    @Test func decodingAnEmptyIntsBlockWritesNothingIntoTheSharedEmptyArray() async {
        await #expect(processExitsWith: .success) {
            let values = try SharedEmptyArrayTests.withSharedEmptyArrayReadOnly {
                var reader = ByteReader([0, 0, 0], context: "an empty ints block")
                return try reader.ints(count: 0)
            }
            guard values == [] else { exit(2) }
        }
    }

    /// The same for the initializer every buffer-filling call in the library goes through, at a capacity of 0, with
    /// the body still run (its checks still apply) on an empty buffer.
    @Test func anUninitializedArrayOfNoElementsWritesNothingIntoTheSharedEmptyArray() async {
        await #expect(processExitsWith: .success) {
            let (array, contiguous, calls) = try SharedEmptyArrayTests.withSharedEmptyArrayReadOnly {
                var calls = 0
                let array = [Int64](uninitializedCapacity: 0) { buffer, initialized in
                    calls += buffer.count == 0 ? 1 : 100
                    initialized = 0
                }
                let contiguous = ContiguousArray<UInt8>(uninitializedCapacity: 0) { buffer, initialized in
                    calls += buffer.count == 0 ? 1 : 100
                    initialized = 0
                }
                return (array, contiguous, calls)
            }
            guard array == [], contiguous == [], calls == 2 else { exit(2) }
        }
    }

    /// Runs `body` with the memory page holding `_swiftEmptyArrayStorage` read-only (a write there is a SIGSEGV).
    static func withSharedEmptyArrayReadOnly<R>(_ body: () throws -> R) throws -> R {
        guard let storage = dlsym(nil, "_swiftEmptyArrayStorage") else {
            throw TrellisError(.failed, "no _swiftEmptyArrayStorage: \(String(cString: dlerror()))")
        }
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let page = UnsafeMutableRawPointer(bitPattern: Int(bitPattern: storage) & ~(pageSize - 1))
        // Eight words from the object's start: its header (class, reference count, count, capacity) and then some.
        let end = Int(bitPattern: storage) + 64
        let length = (end - Int(bitPattern: page) + pageSize - 1) / pageSize * pageSize
        guard mprotect(page, length, PROT_READ) == 0 else { throw TrellisError(.failed, "mprotect: errno \(errno)") }
        defer { _ = mprotect(page, length, PROT_READ | PROT_WRITE) }
        return try body()
    }
}

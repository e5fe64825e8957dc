import CThreadSanitizer

/// Whether this process runs under ThreadSanitizer, which makes every memory access several times slower: the tests
/// of concurrent work run smaller there, the same interleavings on fewer objects.
package enum ThreadSanitizer {
    /// True in a build with `--sanitize=thread`.
    package static var isActive: Bool { trellis_tsan_active() != 0 }
}

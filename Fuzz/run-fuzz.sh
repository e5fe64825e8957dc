#!/usr/bin/env bash
# Fuzzes the journal, checkpoint and manifest readers with libFuzzer for a bounded time (case 20 of the crash matrix).
#
# Usage: Fuzz/run-fuzz.sh [seconds]     (default 60; the release check runs 1800)
#
# Builds the library's modules in layer order (each with testing enabled, so that Fuzz/*.swift reaches the internal
# readers through `@testable import`), then Fuzz/*.swift on top, all with `-sanitize=fuzzer` (no flags reach the
# package's own targets), and runs from the seeds in Fuzz/corpus. New inputs go to .build/fuzz/corpus, crashes to
# .build/fuzz/crash-*. A single allocation over 256 MB or a resident size over 1 GB counts as a failure, as does an
# input that runs longer than 10 seconds.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
work=${TRELLIS_FUZZ_WORK:-$root/.build/fuzz}
modules="$work/modules"
mkdir -p "$work/corpus" "$modules"
flags=(-sanitize=fuzzer ${TRELLIS_FUZZ_OPT:--O} -parse-as-library -swift-version 6 -package-name trellis -I "$root/Sources/CZlib" -I "$root/Sources/CThreadSanitizer" -I "$root/Sources/CTrellisHints" -I "$modules")
objects=()
# The layers, lowest first, as in Package.swift and .ci/check-layers.py, then the test support the fuzzer's store
# directories are written to (the simulated file layer).
for module in TrellisCore TrellisGraph TrellisJournal TrellisStore TrellisTestSupport; do
    swiftc "${flags[@]}" -wmo -enable-testing -module-name "$module" \
        -emit-module -emit-module-path "$modules/$module.swiftmodule" -c -o "$modules/$module.o" \
        $(find "$root/Sources/$module" -name '*.swift' | sort)
    objects+=("$modules/$module.o")
done
swiftc "${flags[@]}" -module-name FuzzReaders -lz "${objects[@]}" "$root"/Fuzz/*.swift -o "$work/fuzz-readers"
# libFuzzer, not Swift's backtracer, must see a trap, so that it saves the input as .build/fuzz/crash-*.
export SWIFT_BACKTRACE=enable=no
exec "$work/fuzz-readers" "$work/corpus" "$root/Fuzz/corpus" \
    -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=1024 -malloc_limit_mb=256 \
    -print_final_stats=1 -artifact_prefix="$work/" ${TRELLIS_FUZZ_ARGS:-}

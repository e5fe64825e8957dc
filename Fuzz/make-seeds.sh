#!/usr/bin/env bash
# Writes the fuzzer's seed corpus (Fuzz/corpus) from real stores made by `trellis-crashtest`: a manifest, a
# checkpoint, segments, and a whole directory, each once as is and once with "fix checksums" set (see FuzzInput.swift).
# Usage: Fuzz/make-seeds.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
swift build --product trellis-crashtest >/dev/null
bin=$(swift build --show-bin-path)/trellis-crashtest
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" run --dir "$work/a" --commits 10 --compact-every 6 >/dev/null   # checkpoint 6, records 7…10
"$bin" run --dir "$work/b" --commits 6 >/dev/null                      # segment 1, records 1…6
out="$root/Fuzz/corpus"
rm -rf "$out"
mkdir -p "$out"
byte() { printf "\\x$(printf %02x "$1")"; }
seed() { # name target file...
    local name=$1 target=$2
    shift 2
    for fix in 0 1; do
        { byte "$target"; byte "$fix"; cat "$@"; } >"$out/$name-$fix"
    done
}
entry() { # index file: one directory entry
    local size
    size=$(stat -c %s "$2")
    byte "$1"; byte $((size & 255)); byte $((size >> 8)); cat "$2"
}
seed manifest 0 "$work/a/MANIFEST"
seed checkpoint 1 "$work/a"/checkpoint-*.trc
seed segment-with-records 2 "$work/b/segment-0000000000000001.trj"
seed segment-after-checkpoint 2 "$work/a"/segment-*.trj
{
    entry 0 "$work/a/MANIFEST"
    entry 4 "$work/a"/checkpoint-*.trc
    entry 2 "$work/a/segment-0000000000000002.trj"
} >"$work/directory"
seed directory 3 "$work/directory"
ls -l "$out"

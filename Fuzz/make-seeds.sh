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
"$bin" seed-contacts --dir "$work/c" --people 12 >/dev/null            # segment 1, record 1 (schema v1)
"$bin" migrate-contacts --dir "$work/c" >/dev/null                     # segment 2, record 2: a migration to v2
# Segments end in the space the writer reserved (zeros); a seed keeps only their frames, so that a directory entry's
# 16-bit length holds them and the fuzzer's mutations land on records.
trim() {
    python3 - "$@" <<'PY'
import struct, sys
for path in sys.argv[1:]:
    data = open(path, 'rb').read()
    offset = struct.unpack_from('<I', data, 12)[0]
    header = 40 if struct.unpack_from('<H', data, 8)[0] >= 6 else 32  # frame header: 40 bytes from version 6
    while offset + header <= len(data) and data[offset:offset + 8] != bytes(8):
        offset += (header + struct.unpack_from('<I', data, offset + 4)[0] + 7) & ~7
    open(path, 'wb').write(data[:offset])
PY
}
trim "$work"/a/segment-*.trj "$work"/b/segment-*.trj "$work"/c/segment-*.trj
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
seed segment-with-migration 2 "$work/c/segment-0000000000000002.trj"
{
    entry 0 "$work/c/MANIFEST"
    entry 1 "$work/c/segment-0000000000000001.trj"
    entry 2 "$work/c/segment-0000000000000002.trj"
} >"$work/migrated"
seed directory-migrated 3 "$work/migrated"
ls -l "$out"

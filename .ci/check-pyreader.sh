#!/usr/bin/env bash
# Proves journal-format.md by a second reader: Tools/trellis-pyreader/trellis_reader.py, written from the document
# alone (Python 3 standard library), must print exactly what the Swift `trellis` tool prints for `export` and
# `dump --json` on a range of stores. Builds nothing: give it the built tool.
#
#   .ci/check-pyreader.sh [path/to/trellis]     (default: .build/debug/trellis)
#
# Stores (each made in a temporary directory by the tool itself, or copied from the repository):
#   demo           `trellis demo`: inserts, links, a cascade delete of a folder tree, a migration (segment 2)
#   demo-compacted the demo after `trellis compact`: a checkpoint only
#   demo-big       a larger demo, compacted: checkpoints of several chunks, compressed records and sections
#   format3        Tests/TrellisTests/Fixtures/format3-store: a version-3 store (checkpoint + two segments: updates,
#                  deletes, doubles, data), and the same store compacted by this build
#   migrated       the demo migrated to a schema with an attribute of every type, renames, a widening, a new entity
#                  and indexes (Tools/trellis-pyreader/migration_schemas.py 1); then compacted (a checkpoint of every
#                  column kind, with index-order chunks); then migrated again (a retired entity, a renamed entity,
#                  nulls filled, removals) on top of that checkpoint, and compacted again
#   torn           the demo with 100 bytes of garbage after its last record (a torn tail, reported by both)
#   composites     composite attributes (issue 19): 7 rounds of `trellis-crashtest profiles` (every leaf type, nested
#                  and optional composites, nulls, one-field updates, a compaction), when trellis-crashtest is built
#                  next to the tool (skipped with a note otherwise)
#   collections    collection attributes (issue 19, format version 8): 7 rounds of `trellis-crashtest tags` (every
#                  collection type, optional ones, empty and nil collections, element indexes, a compaction), likewise
#   metadata       typed open metadata (issue 19, format version 9): 7 rounds of `trellis-crashtest metadata` (every
#                  kind of value, null included, missing keys, empty and nil dictionaries, a pairs index, a
#                  compaction), likewise
#   ordered        ordered relationships (issue 19, format version 8): 300 commits of `trellis-crashtest ordered`
#                  (inserts, moves and removes at positions, place edits, deletes, a compaction halfway), likewise
#   fragments      records of several frames (format version 10): the demo written with 200-byte fragments
#                  (`TRELLIS_TEST_FRAGMENT_BYTES`), so that every commit spans frames; then compacted (checkpoint
#                  chunks of several frames); and (with trellis-crashtest) 30 commits of the crash workload in
#                  200-byte fragments, killed, with its last record cut inside its frames (a torn tail)
# Every store is also read with `trellis_reader.py verify`, which checks each stored index order against the order
# the document defines. Exits 1 with a diff at the first disagreement.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
trellis=${1:-$root/.build/debug/trellis}
reader=$root/Tools/trellis-pyreader/trellis_reader.py
schemas=$root/Tools/trellis-pyreader/migration_schemas.py
if [ ! -x "$trellis" ]; then
    echo "check-pyreader: no trellis binary at $trellis (build it: swift build --product trellis)" >&2
    exit 2
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/check-pyreader.XXXXXX")
trap 'rm -rf "$work"' EXIT

failed=0
compared=0

# compare NAME: both readers on $work/NAME, for export and dump --json; exit codes must agree too.
compare() {
    local store=$work/$1
    local cmd swift_rc py_rc
    for cmd in export dump; do
        local args=()
        [ "$cmd" = dump ] && args=(--json)
        set +e
        "$trellis" "$cmd" "$store" "${args[@]}" >"$work/$1.$cmd.swift" 2>/dev/null
        swift_rc=$?
        python3 "$reader" "$cmd" "$store" >"$work/$1.$cmd.py" 2>"$work/$1.$cmd.py.err"
        py_rc=$?
        set -e
        if ! cmp -s "$work/$1.$cmd.swift" "$work/$1.$cmd.py" || [ "$swift_rc" != "$py_rc" ]; then
            echo "check-pyreader: $1: '$cmd' differs (trellis exit $swift_rc, trellis_reader.py exit $py_rc)" >&2
            cat "$work/$1.$cmd.py.err" >&2
            diff -u "$work/$1.$cmd.swift" "$work/$1.$cmd.py" | cut -c1-400 | head -60 >&2 || true
            failed=1
        fi
    done
    if [ "$1" != torn ] && [ "$1" != hole ] && [ "$1" != fragments-torn ] && ! python3 "$reader" verify "$store" >"$work/$1.verify" 2>&1; then
        echo "check-pyreader: $1: trellis_reader.py verify failed" >&2
        cat "$work/$1.verify" >&2
        failed=1
    fi
    compared=$((compared + 1))
    echo "check-pyreader: $1: $(head -1 "$work/$1.verify" 2>/dev/null || echo "$1")"
}

# copy FROM TO: a store copied (without its lock file)
copy() {
    mkdir "$work/$2"
    find "$work/$1" -maxdepth 1 -type f ! -name LOCK -exec cp {} "$work/$2/" \;
}

"$trellis" demo "$work/demo" --items 500 --fan-out 3 --depth 4 >/dev/null
compare demo

copy demo demo-compacted
"$trellis" compact "$work/demo-compacted" >/dev/null
compare demo-compacted

"$trellis" demo "$work/demo-big" --items 12000 --fan-out 4 --depth 5 >/dev/null
compare demo-big
"$trellis" compact "$work/demo-big" >/dev/null
compare demo-big

mkdir "$work/format3"
cp "$root"/Tests/TrellisTests/Fixtures/format3-store/* "$work/format3/"
compare format3
copy format3 format3-compacted
"$trellis" compact "$work/format3-compacted" >/dev/null
compare format3-compacted

copy demo migrated
"$trellis" info "$work/migrated" --json >"$work/info1.json"
python3 "$schemas" 1 "$work/info1.json" "$work/schema1.json"
"$trellis" migrate "$work/migrated" --to "$work/schema1.json" >/dev/null
compare migrated
"$trellis" compact "$work/migrated" >/dev/null
compare migrated
"$trellis" info "$work/migrated" --json >"$work/info2.json"
python3 "$schemas" 2 "$work/info2.json" "$work/schema2.json"
"$trellis" migrate "$work/migrated" --to "$work/schema2.json" >/dev/null
compare migrated
"$trellis" compact "$work/migrated" >/dev/null
compare migrated

copy demo torn
last=$(ls "$work/torn" | grep '^segment-' | sort | tail -1)
python3 -c "import sys; open(sys.argv[1], 'ab').write(bytes(range(7, 107)))" "$work/torn/$last"
compare torn

# Rot in a length: one flipped bit in the stored length of the last record. Both readers must call it rot (not a
# torn tail) at the same offset.
copy demo rot-length
python3 - "$work/rot-length/$last" <<'PY'
import struct, sys
path = sys.argv[1]
data = bytearray(open(path, 'rb').read())
fh = 40 if struct.unpack_from('<H', data, 8)[0] >= 6 else 32
offset, last = struct.unpack_from('<I', data, 12)[0], None
while offset + fh <= len(data) and any(data[offset:offset + fh]):
    last = offset
    offset += (fh + struct.unpack_from('<I', data, offset + 4)[0] + 7) & ~7
data[last + 4] ^= 1 << 2
open(path, 'wb').write(bytes(data))
PY
python3 "$reader" verify "$work/rot-length" >"$work/rot-length.verify.py" 2>&1 || true
"$trellis" verify "$work/rot-length" >"$work/rot-length.verify.swift" 2>&1 || true
rot_py=$(grep -m1 -o "segment-[0-9a-f]*\.trj at offset [0-9]*: rot: " "$work/rot-length.verify.py" || true)
rot_swift=$(grep -m1 -o "segment-[0-9a-f]*\.trj at offset [0-9]*: rot: " "$work/rot-length.verify.swift" || true)
if [ -z "$rot_py" ] || [ "$rot_py" != "$rot_swift" ]; then
    echo "check-pyreader: rot-length: expected the same rot from both readers; python '$rot_py', trellis '$rot_swift'" >&2
    head -c 400 "$work/rot-length.verify.py" "$work/rot-length.verify.swift" >&2
    failed=1
else
    echo "check-pyreader: rot-length: $rot_swift(both readers)"
fi

# A hole (format version 6): a record lost under a later one whose watermark says it was never acknowledged. Both
# readers must stop at the hole and report it, word for word, as an unacknowledged hole.
copy demo hole
python3 "$root/Tools/trellis-pyreader/craft_hostile.py" --hole "$work/hole" >/dev/null
compare hole
python3 "$reader" verify "$work/hole" >"$work/hole.verify.py" 2>&1 || true
"$trellis" verify "$work/hole" >"$work/hole.verify.swift" 2>&1 || true
for side in py swift; do
    if ! grep -q ": unacknowledged hole: " "$work/hole.verify.$side"; then
        echo "check-pyreader: hole: the $side reader's verify does not report an unacknowledged hole" >&2
        cat "$work/hole.verify.$side" >&2
        failed=1
    fi
done

TRELLIS_TEST_FRAGMENT_BYTES=200 "$trellis" demo "$work/fragments" --items 300 --fan-out 3 --depth 3 >/dev/null
compare fragments
TRELLIS_TEST_FRAGMENT_BYTES=200 "$trellis" compact "$work/fragments" >/dev/null
compare fragments

crashtest=$(dirname "$trellis")/trellis-crashtest
if [ -x "$crashtest" ]; then
    for round in 1 2 3 4 5 6 7; do "$crashtest" profiles --dir "$work/composites" --add "$round" >/dev/null; done
    compare composites
    for round in 1 2 3 4 5 6 7; do "$crashtest" tags --dir "$work/collections" --add "$round" >/dev/null; done
    compare collections
    for round in 1 2 3 4 5 6 7; do "$crashtest" metadata --dir "$work/metadata" --add "$round" >/dev/null; done
    compare metadata
    "$crashtest" ordered --dir "$work/ordered" --add 300 >/dev/null
    compare ordered
    # A torn record of several frames: the crash workload with 200-byte fragments, killed (SIGKILL) after its
    # last commit so that nothing claims the records durable, then cut in the middle of the second frame of its
    # last record: a torn tail for both readers.
    TRELLIS_TEST_FRAGMENT_BYTES=200 "$crashtest" run --dir "$work/fragments-torn" --commits 30 --hold \
        >"$work/hold.out" 2>/dev/null &
    holder=$!
    for _ in $(seq 1 600); do grep -q holding "$work/hold.out" 2>/dev/null && break; sleep 0.1; done
    kill -9 "$holder"
    wait "$holder" 2>/dev/null || true
    rm -f "$work/fragments-torn/LOCK"
    last=$(ls "$work/fragments-torn" | grep '^segment-' | sort | tail -1)
    python3 - "$work/fragments-torn/$last" <<'PY'
import struct, sys
# Cut the file in the middle of the second frame of its last record of several frames (flags bit 0 = more follow).
path = sys.argv[1]
data = bytearray(open(path, 'rb').read())
offset, first = struct.unpack_from('<I', data, 12)[0], None
while offset + 40 <= len(data) and any(data[offset:offset + 40]):
    flags = struct.unpack_from('<H', data, offset + 10)[0]
    if flags == 1:
        first = offset
    offset += (40 + struct.unpack_from('<I', data, offset + 4)[0] + 7) & ~7
assert first is not None, "no record of several frames"
second = first + ((40 + struct.unpack_from('<I', data, first + 4)[0] + 7) & ~7)
open(path, 'wb').write(bytes(data[:second + 20]))
PY
    compare fragments-torn
else
    echo "check-pyreader: composites, collections, metadata, ordered, fragments-torn: skipped (no trellis-crashtest at $crashtest)"
fi

if [ "$failed" != 0 ]; then
    echo "check-pyreader: the readers disagree (see above); journal-format.md or trellis_reader.py is wrong" >&2
    exit 1
fi
echo "check-pyreader: $compared comparisons, trellis and trellis_reader.py agree"

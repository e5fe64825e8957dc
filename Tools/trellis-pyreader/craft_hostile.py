"""Crafts hostile Trellis stores with valid checksums (issue 23, items 6 and 7), standard library only.

    craft_hostile.py BASE COMPACTED OUT
    craft_hostile.py --hole STORE


BASE is a store with a journal whose schema has an attribute of every type (the demo migrated with
`migration_schemas.py 1`), COMPACTED the same store after `trellis compact` (a checkpoint and an empty segment).
Writes one store per case under OUT and OUT/cases.tsv: name, what every reader must do, and an object ID for
`history`. Expectations:

    damage   verify exits 1 (the damage is reported); every other command finishes (any exit code, no signal)
    clean    every command finishes; verify exits 0 (a legal if odd value: printed, never a trap)
    same     verify exits 0 and export prints exactly what it prints for the store the case was made from
    toolarge verify exits 1 saying "too large": valid chunks describing more than the process can hold
    open     a class not fixed yet (issue 23): run and reported as OPEN, not failed

`--hole` turns STORE (a store whose last segment is of version 6) into the store a power cut over preallocated
space leaves: two empty records appended as one batch whose watermark says only the records before them were
durable, the first of them zeroed, and the manifest's durable sequence no higher than the last record before them. `.ci/check-pyreader.sh` compares both readers on it (an `unacknowledged hole`).

Every file is parsed with trellis_reader.py (written from journal-format.md) and written back with its checksums
recomputed, so only the rules behind the checksums can find what each case breaks.
"""

import os
import shutil
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trellis_reader as tr  # noqa: E402


# ---------------------------------------------------------------------------------------------------------------
# Encoders (the inverse of the reader's primitives)

def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def signed(n):
    return varint((n << 1) ^ (n >> 63))


def text(s):
    b = s.encode()
    return varint(len(b)) + b


def encode_header(magic, h, schema_bytes, flags=0, reserved=0, extra=0, padding_byte=0):
    body = bytearray(magic)
    length = tr.align8(60 + len(schema_bytes)) + extra
    body += struct.pack("<HHIQQQQII", h.version, flags, length, h.id, h.sequence, h.salt, h.stored_fingerprint,
                        len(schema_bytes), reserved)
    body += schema_bytes
    body += struct.pack("<I", tr.crc32(bytes(body)))
    body += bytes([padding_byte]) * (length - len(body))
    return bytes(body)


# The frame layout of the files the cases are made from (§ Records: 40-byte headers from version 6, 32 before);
# main() sets it from the base store's last segment.
FRAME_VERSION = 6


def encode_frame(salt, ftype, seq, payload, time=0, codec=0, flags=0, raw_len=None, padding_byte=0, watermark=0,
                 version=None):
    stored = payload
    if raw_len is None:
        raw_len = len(payload)
    head = struct.pack("<IBBHIQq", len(stored), ftype, codec, flags, raw_len, seq & ((1 << 64) - 1), time)
    if tr.frame_header_size(FRAME_VERSION if version is None else version) > 32:
        head += struct.pack("<Q", watermark)
    crc = tr.crc32(struct.pack("<Q", salt), head, stored)
    frame = struct.pack("<I", crc) + head + stored
    return frame + bytes([padding_byte]) * (tr.align8(len(frame)) - len(frame))


def deflated_frame(salt, ftype, seq, raw, time=0, trailing=b"", watermark=0):
    stored = zlib.compress(raw, 9) + trailing
    return encode_frame(salt, ftype, seq, stored, time=time, codec=1, raw_len=len(raw), watermark=watermark)


def encode_manifest(m, checkpoint_bytes=None, flags=0, length=None, reserved=None):
    """Version 5's 76 bytes (durable sequence, everything under the checksum); with `reserved`, the 72-byte layout
    of versions 1-4 (checksum over 0..<64, then the reserved word) as version 4."""
    legacy = reserved is not None or m["version"] < 5
    version = min(m["version"], 4) if legacy else m["version"]
    body = tr.MANIFEST_MAGIC + struct.pack(
        "<HHIQQQQQQ", version, flags, length if length is not None else (72 if legacy else 76), m["generation"],
        m["fingerprint"], m["checkpoint"], m["checkpoint_bytes"] if checkpoint_bytes is None else checkpoint_bytes,
        m["first"], m["last"])
    if legacy:
        return body + struct.pack("<II", tr.crc32(body), reserved or 0)
    body += struct.pack("<Q", m.get("durable", 0))
    return body + struct.pack("<I", tr.crc32(body))


def value(type_raw, v):
    """A tagged value for an attribute of `type_raw`; v None is null."""
    if v is None:
        return b"\x00"
    if type_raw == 10:
        return b"\x06" + struct.pack("<d", v)
    if type_raw in tr.INT_TYPES:
        return b"\x03" + signed(v)
    raise ValueError(type_raw)


# ---------------------------------------------------------------------------------------------------------------
# A store in memory: the last segment parsed into header and frames

class Segment:
    def __init__(self, path):
        self.path = path
        self.data = open(path, "rb").read()
        self.header = tr.read_header(self.data, tr.SEGMENT_MAGIC, os.path.basename(path))
        self.schema = self.header.schema
        self.frames = []
        offset = self.header.length
        while True:
            step = tr.scan_frame(self.data, offset, self.header.salt, [], {1, 6}, "",
                                 tr.frame_header_size(self.header.version))
            if step[0] != "frame":
                break
            self.frames.append(step[1])
            offset += step[1].size
        self.end = offset

    def header_bytes(self, **kw):
        return encode_header(tr.SEGMENT_MAGIC, self.header, self.header.schema_bytes, **kw)

    def frames_bytes(self):
        return self.data[self.header.length:self.end]

    def next_sequence(self):
        return self.frames[-1].sequence + 1 if self.frames else self.header.sequence


def copy_store(src, dst):
    os.makedirs(dst)
    for name in os.listdir(src):
        if name != "LOCK" and os.path.isfile(os.path.join(src, name)):
            shutil.copy(os.path.join(src, name), os.path.join(dst, name))


def segment_names(store):
    return sorted(n for n in os.listdir(store) if n.startswith("segment-") and n.endswith(".trj"))


def rewrite_manifest(store, **kw):
    m = tr.read_manifest(os.path.join(store, "MANIFEST"))
    open(os.path.join(store, "MANIFEST"), "wb").write(encode_manifest(m, **kw))


def date_entity(schema):
    """(entity number, attributes, position of a Date attribute) of the first entity with one."""
    for i, e in enumerate(schema.entities):
        for a, attr in enumerate(e.attributes):
            if attr.type == 10 and not e.retired:
                return i, e.attributes, a
    raise SystemExit("craft_hostile: the base schema has no Date attribute")


def first_object(store):
    graph, _ = tr.read_store(store)
    for i, e in enumerate(graph.schema.entities):
        rows = graph.tables[i].rows
        if rows:
            return i, min(rows), e
    raise SystemExit("craft_hostile: the base store holds no object")


# ---------------------------------------------------------------------------------------------------------------
# The cases

def make_hole(store):
    """--hole: see the module's documentation."""
    global FRAME_VERSION
    path = os.path.join(store, segment_names(store)[-1])
    seg = Segment(path)
    FRAME_VERSION = seg.header.version
    if seg.header.version < 6:
        raise SystemExit("craft_hostile: --hole needs a store whose last segment is of version 6")
    seq = seg.next_sequence()
    empty = varint(0) * 4
    # Two records written in one batch after record seq - 1 was durable (their watermark); the first never made it.
    lost = encode_frame(seg.header.salt, 1, seq, empty, watermark=seq - 1)
    after = encode_frame(seg.header.salt, 1, seq + 1, empty, watermark=seq - 1)
    open(path, "wb").write(seg.data[:seg.end] + bytes(len(lost)) + after)
    m = tr.read_manifest(os.path.join(store, "MANIFEST"))
    m["durable"] = min(m["durable"], seq - 1)
    open(os.path.join(store, "MANIFEST"), "wb").write(encode_manifest(m))
    print(f"craft_hostile: record {seq} of {os.path.basename(path)} is a hole at offset {seg.end}")
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--hole":
        return make_hole(argv[2])
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    base, compacted, out = argv[1:]
    os.makedirs(out, exist_ok=True)
    cases = []
    entity, serial, ent = first_object(base)
    object_id = f"{ent.name}#{serial}"

    def case(name, expect, source=base):
        store = os.path.join(out, name)
        shutil.rmtree(store, ignore_errors=True)
        copy_store(source, store)
        cases.append((name, expect, object_id, os.path.basename(source)))
        last = os.path.join(store, segment_names(store)[-1])
        return store, last

    def append(last, *frames):
        with open(last, "r+b") as f:
            seg = Segment(last)
            f.seek(seg.end)
            for frame in frames:
                f.write(frame)
            f.truncate()

    seg = Segment(os.path.join(base, segment_names(base)[-1]))
    global FRAME_VERSION
    FRAME_VERSION = seg.header.version
    salt, seq = seg.header.salt, seg.next_sequence()
    schema = seg.schema
    d_entity, d_attrs, d_pos = date_entity(schema)
    d_serial = max(tr.read_store(base)[0].tables[d_entity].rows or [0]) + 1000

    def insert(entity_no, attrs, serial_no, values):
        return varint(entity_no) + varint(serial_no) + varint(len(attrs)) + b"".join(
            value(a.type, v) for a, v in zip(attrs, values))

    def change_set(inserts=(), updates=(), deletes=()):
        p = varint(len(inserts)) + b"".join(inserts)
        p += varint(len(updates)) + b"".join(updates)
        p += varint(0)
        p += varint(len(deletes)) + b"".join(deletes)
        # From version 7 a record ends with its author: u8 1 for none (§ Change-set payload).
        if FRAME_VERSION >= 7:
            p += b"\x01"
        return p

    # --- 6: memory and time -----------------------------------------------------------------------------------
    # A value count that the inflated bytes allow but the schema does not: 256 MiB of nulls for one insert.
    _, last = case("huge-value-count", "damage")
    raw = varint(1) + varint(d_entity) + varint(d_serial) + varint(256 << 20) + bytes(256 << 20)
    append(last, deflated_frame(salt, 1, seq, raw + bytes(3)))
    # Millions of inserts of one object, each a few bytes, in one 512 MiB-class deflate bomb.
    _, last = case("huge-insert-count", "damage")
    one = insert(d_entity, d_attrs, d_serial, [None] * len(d_attrs))
    n = (200 << 20) // len(one)
    append(last, deflated_frame(salt, 1, seq, varint(n) + one * n + bytes(3)))
    # Many frames, each inflating over a thousand to one: a deflate bomb spread over a 400 KB file.
    _, last = case("deflate-bomb", "damage")
    frames = []
    for k in range(40):
        ins = [insert(d_entity, d_attrs, d_serial + k * 100000 + j, [None] * len(d_attrs)) for j in range(1)]
        raw = change_set(inserts=ins) + bytes(0)
        # A valid record padded with a string value of 8 MiB in a delete of an absent object.
        big = varint(d_entity) + varint(d_serial + 99) + varint(1) + b"\x07" + varint(8 << 20) + bytes(8 << 20)
        raw = varint(len(ins)) + b"".join(ins) + varint(0) + varint(0) + varint(1) + big + varint(0)
        frames.append(deflated_frame(salt, 1, seq + k, raw))
    append(last, *frames)
    # Bytes after the end of a zlib stream, inside the stored length.
    _, last = case("bytes-after-zlib-stream", "damage")
    ins = insert(d_entity, d_attrs, d_serial, [None] * len(d_attrs))
    append(last, deflated_frame(salt, 1, seq, change_set(inserts=[ins] * 1) + bytes(600), trailing=b"junk"))
    # Version 8's list tag (12): a count far beyond the record, and a list where the schema has no collection (the
    # base has none: every column's kind refuses it).
    def raw_insert(first):
        return varint(d_entity) + varint(d_serial) + varint(len(d_attrs)) + first + b"\x00" * (len(d_attrs) - 1)
    _, last = case("list-huge-count", "damage")
    append(last, encode_frame(salt, 1, seq, change_set(inserts=[raw_insert(b"\x0c" + varint(1 << 40) + b"\x03\x00")])))
    _, last = case("list-in-a-scalar-column", "damage")
    append(last, encode_frame(salt, 1, seq, change_set(inserts=[raw_insert(b"\x0c\x01\x05\x01a")])))
    # Resync over a large damaged segment: every aligned offset a plausible header with a bad checksum, each
    # claiming the rest of the file, then a valid record (so the damage is mid-log).
    store, last = case("resync-quadratic", "damage")
    span = 4 << 20
    blob = bytearray(span)
    for off in range(0, span - 64, 8):
        fh = tr.frame_header_size(FRAME_VERSION)
        struct.pack_into("<IIBBHI", blob, off, 0xDEADBEEF, span - off - fh, 1, 0, 0, span - off - fh)
    ins = insert(d_entity, d_attrs, d_serial, [None] * len(d_attrs))
    append(last, encode_frame(salt, 1, seq, change_set(inserts=[ins])), bytes(blob),
           encode_frame(salt, 1, seq + 1, change_set()))

    # --- 6: values no reader may trap on ----------------------------------------------------------------------
    for label, v in [("nan", float("nan")), ("inf", float("inf")), ("minus-inf", float("-inf")),
                     ("huge", 1e300), ("minus-huge", -1e300), ("year-300000", 300000 * 365.25 * 86400)]:
        _, last = case(f"date-{label}", "clean")
        values = [None] * len(d_attrs)
        values[d_pos] = v
        append(last, encode_frame(salt, 1, seq, change_set(inserts=[insert(d_entity, d_attrs, d_serial, values)])))
    for label, t in [("int64-max", (1 << 63) - 1), ("int64-min", -(1 << 63)), ("near-max", (1 << 63) - 500000)]:
        _, last = case(f"time-{label}", "clean")
        append(last, encode_frame(salt, 1, seq, change_set(), time=t))

    # --- 7: every byte checked ---------------------------------------------------------------------------------
    def rewrite_last(last, header=None, frames=None):
        s = Segment(last)
        open(last, "wb").write((header or s.header_bytes()) + (frames if frames is not None else s.frames_bytes()))

    _, last = case("segment-header-flags", "damage")
    rewrite_last(last, header=Segment(last).header_bytes(flags=1))
    _, last = case("segment-header-reserved", "damage")
    rewrite_last(last, header=Segment(last).header_bytes(reserved=7))
    _, last = case("segment-header-padding", "damage")
    s = Segment(last)
    if (60 + len(s.header.schema_bytes)) % 8:
        rewrite_last(last, header=s.header_bytes(padding_byte=0x55))
    else:
        rewrite_last(last, header=s.header_bytes(extra=8, padding_byte=0x55))
    _, last = case("segment-header-longer", "damage")
    rewrite_last(last, header=Segment(last).header_bytes(extra=8))
    _, last = case("segment-id-wrong", "damage")
    s = Segment(last)
    s.header.id += 5
    rewrite_last(last, header=s.header_bytes())
    _, last = case("frame-flags", "damage")
    append(last, encode_frame(salt, 1, seq, change_set(), flags=4))
    # Records of several frames (format version 10): flags bit 0 = more frames follow, bit 1 = continues a record.
    ins = insert(d_entity, d_attrs, d_serial, [None] * len(d_attrs))
    whole = change_set(inserts=[ins])
    _, last = case("fragments-valid", "clean")
    append(last, encode_frame(salt, 1, seq, whole[:3], flags=1), encode_frame(salt, 1, seq, whole[3:5], flags=3),
           encode_frame(salt, 1, seq, whole[5:], flags=2))
    _, last = case("fragment-alone", "damage")
    append(last, encode_frame(salt, 1, seq, change_set(), flags=2))
    _, last = case("fragment-unfinished-then-record", "damage")
    append(last, encode_frame(salt, 1, seq, whole[:3], flags=1), encode_frame(salt, 1, seq, change_set()))
    _, last = case("fragment-other-sequence", "damage")
    append(last, encode_frame(salt, 1, seq, whole[:3], flags=1), encode_frame(salt, 1, seq + 1, whole[3:], flags=2),
           encode_frame(salt, 1, seq + 1, change_set()))
    _, last = case("frame-padding", "damage")
    ins = insert(d_entity, d_attrs, d_serial, [None] * len(d_attrs))
    p = change_set(inserts=[ins])
    if (tr.frame_header_size(FRAME_VERSION) + len(p)) % 8 == 0:
        p = change_set(inserts=[ins]) + b""
        ins2 = insert(d_entity, d_attrs, d_serial + 1, [None] * len(d_attrs))
        p = change_set(inserts=[ins, ins2])
    append(last, encode_frame(salt, 1, seq, p, padding_byte=0x33), encode_frame(salt, 1, seq + 1, change_set()))
    _, last = case("frame-flags-high-bit", "damage")
    append(last, encode_frame(salt, 1, seq, change_set(), flags=0x8000))
    store, last = case("manifest-flags", "damage")
    rewrite_manifest(store, flags=1)
    store, last = case("manifest-reserved", "damage")
    rewrite_manifest(store, reserved=1)
    store, last = case("manifest-length", "damage")
    rewrite_manifest(store, length=80)
    store, last = case("manifest-checkpoint-size", "damage", compacted)
    m = tr.read_manifest(os.path.join(store, "MANIFEST"))
    rewrite_manifest(store, checkpoint_bytes=m["checkpoint_bytes"] + 8)
    # Sequence numbers wrapping: the last records numbered 2^64 - 1, then 0.
    _, last = case("sequence-wrap", "damage")
    append(last, encode_frame(salt, 1, (1 << 64) - 1, change_set()), encode_frame(salt, 1, 0, change_set()))
    # A segment header whose schema differs from the one in effect, with no migration record: a new attribute name.
    _, last = case("segment-schema-switch", "damage")
    s = Segment(last)
    e0 = s.schema.entities[d_entity]
    old = e0.attributes[d_pos].name.encode()
    new = (b"Z" + old[1:]) if old[:1] != b"Z" else (b"Y" + old[1:])
    sb = s.header.schema_bytes.replace(varint(len(old)) + old, varint(len(new)) + new, 1)
    assert sb != s.header.schema_bytes
    open(last, "wb").write(
        encode_header(tr.SEGMENT_MAGIC, s.header, sb) + s.frames_bytes())
    # History contradicting itself: an update whose old value is not the value the object holds, and a delete
    # whose values are not those the object had.
    _, last = case("update-old-value-contradicts", "damage")
    graph, _ = tr.read_store(base)
    obj_serial = min(graph.tables[d_entity].rows)
    upd = varint(d_entity) + varint(obj_serial) + varint(1) + varint(d_pos) + value(10, 12345.0) + value(10, 1.0)
    append(last, encode_frame(salt, 1, seq, change_set(updates=[upd])))
    _, last = case("delete-values-contradict", "damage")
    rels = schema.entities[d_entity].relationships
    row = graph.tables[d_entity].rows[obj_serial]
    dele = varint(d_entity) + varint(obj_serial) + varint(len(d_attrs)) + b"".join(
        b"\x00" for _ in d_attrs) + varint(len(rels)) + b"".join(varint(0) for _ in rels)
    if all(v == tr.NULL for v in row[0]) and not any(row[1]):
        dele = dele  # an object whose values are all null cannot contradict nulls: the case then proves nothing
    append(last, encode_frame(salt, 1, seq, change_set(deletes=[dele])))

    # --- Holes (version 6): damage followed by valid frames whose watermarks say what was durable ----------------
    # Record seq + 1 lost to zeros (a frame's worth, as a sector that never reached the disk leaves it), records
    # seq + 2 and seq + 3 after it. The base store closed cleanly, so its durable sequence is seq - 1.
    if FRAME_VERSION >= 6:
        hole = bytes(len(encode_frame(salt, 1, seq + 1, change_set())))

        def holed(name, expect, later_watermark, durable=None):
            store, last = case(name, expect)
            append(last, encode_frame(salt, 1, seq, change_set(), watermark=seq - 1), hole,
                   encode_frame(salt, 1, seq + 2, change_set(), watermark=later_watermark),
                   encode_frame(salt, 1, seq + 3, change_set(), watermark=later_watermark))
            if durable is not None:
                m = tr.read_manifest(os.path.join(store, "MANIFEST"))
                m["durable"] = durable
                open(os.path.join(store, "MANIFEST"), "wb").write(encode_manifest(m))

        # Written after record seq + 1 was durable: acknowledged data is gone (class zeroed, the frame named).
        holed("hole-watermark-acknowledged", "damage", seq + 1)
        # Written before it was: an unacknowledged hole (reported; `.pointInTime` and repair --truncate-tail drop it).
        holed("hole-unacknowledged", "damage", seq - 1)
        # A watermark beyond the journal proves acknowledgement just the same.
        holed("hole-watermark-huge", "damage", (1 << 64) - 1)
        # The manifest's durable sequence covers the hole: never an unacknowledged hole.
        holed("hole-below-durable", "damage", seq - 1, durable=seq + 3)

    # --- Checkpoints -------------------------------------------------------------------------------------------
    cp_name = [n for n in os.listdir(compacted) if n.startswith("checkpoint-")][0]
    cp_data = open(os.path.join(compacted, cp_name), "rb").read()
    cp_header = tr.read_header(cp_data, tr.CHECKPOINT_MAGIC, cp_name)
    cp_frames = []
    off = cp_header.length
    while off < len(cp_data):
        st = tr.scan_frame(cp_data, off, cp_header.salt, [], {2, 3, 4, 5}, cp_name,
                           tr.frame_header_size(cp_header.version))
        cp_frames.append(st[1])
        off += st[1].size

    def write_checkpoint(store, frames_bytes, header=None):
        path = os.path.join(store, cp_name)
        data = (header or encode_header(tr.CHECKPOINT_MAGIC, cp_header, cp_header.schema_bytes)) + frames_bytes
        open(path, "wb").write(data)
        rewrite_manifest(store, checkpoint_bytes=len(data))

    def reframe(frame, seq_no):
        return encode_frame(cp_header.salt, frame.type, seq_no, bytes(frame.stored), codec=frame.codec,
                            raw_len=frame.raw_len, version=cp_header.version)

    # An ignorable frame (type 4 | 0x80) holding a copy of a real columns chunk, before the footer: skipped.
    store, _ = case("checkpoint-ignorable-frame", "same", compacted)
    columns = [f for f in cp_frames if f.type == 4][0]
    body = b"".join(reframe(f, f.sequence) for f in cp_frames[:-1])
    body += encode_frame(cp_header.salt, 0x84, 0, bytes(columns.stored), codec=columns.codec,
                         raw_len=columns.raw_len, version=cp_header.version)
    body += reframe(cp_frames[-1], cp_frames[-1].sequence)
    write_checkpoint(store, body)
    # A checkpoint header with flags, or a reserved field, set.
    store, _ = case("checkpoint-header-flags", "damage", compacted)
    write_checkpoint(store, cp_data[cp_header.length:],
                     encode_header(tr.CHECKPOINT_MAGIC, cp_header, cp_header.schema_bytes, flags=4))
    # Width-0 blocks: chunks of 65,536 rows that take a few dozen bytes each, thousands of them.
    store, _ = case("checkpoint-width0-rows", "damage", compacted)
    cs = cp_header.schema
    target = None
    for i, e in enumerate(cs.entities):
        if not e.retired and all(a.type in tr.INT_TYPES or a.type == 9 for a in e.attributes):
            target = i
            break
    if target is None:
        target = 0
    e = cs.entities[target]

    def sec(payload):
        return b"\x00" + varint(len(payload)) + payload

    def zero_width_ints(base_value):
        return b"\x00" + signed(base_value) + b"\x00"

    def column(a, rows, text):
        if a.type in tr.INT_TYPES:
            return sec(b"\x00" + zero_width_ints(7))
        if a.type == 9:
            # every string `text` bytes long, from a one-letter alphabet: no bits at all
            return sec(b"\x00" + zero_width_ints(text) + b"\x01") + sec(b"\x00" + b"a")
        return sec(b"\x01" + b"\xff" * ((rows + 7) // 8))  # all null

    def width0_checkpoint(store, rows, nchunks, text, claimed=None):
        chunks = []
        for k in range(nchunks):
            first = 1 + k * rows
            payload = varint(target) + varint(rows) + sec(b"\x01" + signed(first) + signed(1) + b"\x00")
            for a in e.attributes:
                payload += column(a, rows, text)
            for _ in e.relationships:
                payload += sec(zero_width_ints(0) + zero_width_ints(0))
            chunks.append(encode_frame(cp_header.salt, 4, k + 1, payload, version=cp_header.version))
        footer = varint(cp_header.sequence) + varint(len(cs.entities))
        for i in range(len(cs.entities)):
            footer += varint(rows * nchunks if i == target else 0)
            footer += varint((rows * nchunks if claimed is None else claimed) if i == target else 0)
        footer += varint(nchunks)
        chunks.append(encode_frame(cp_header.salt, 3, nchunks + 1, footer, version=cp_header.version))
        write_checkpoint(store, b"".join(chunks))

    width0_checkpoint(store, 65536, 3000, 256)
    # The same within the format's limits (4,096 rows a chunk, at most 16 MiB of packed text a chunk), so every chunk
    # is valid and the whole is too large for any machine: 20,000 chunks of about 60 bytes claim 82 million objects,
    # and 400 chunks of 4,096 strings of 4 KiB each 6.7 GB of text. Loading must stop, saying so, within the bound.
    if any(a.type == 9 for a in e.attributes):
        store, _ = case("checkpoint-legal-chunks-text", "toolarge", compacted)
        width0_checkpoint(store, 4096, 400, 4096)
    store, _ = case("checkpoint-legal-chunks-rows", "toolarge", compacted)
    width0_checkpoint(store, 4096, 20000, 1)
    # The same chunks under a footer that claims one chunk's worth: damage, found at the second chunk.
    store, _ = case("checkpoint-legal-chunks-footer-low", "damage", compacted)
    width0_checkpoint(store, 4096, 20000, 1, claimed=4096)

    with open(os.path.join(out, "cases.tsv"), "w") as f:
        for c in cases:
            f.write("\t".join(c) + "\n")
    print(f"craft_hostile: {len(cases)} stores in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

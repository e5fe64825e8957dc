#!/usr/bin/env python3
"""An independent reader of Trellis stores, written from journal-format.md (Python 3 standard library only).

    trellis_reader.py export STORE     the object graph, as `trellis export STORE` prints it
    trellis_reader.py dump STORE       the journal's records, as `trellis dump STORE --json` prints them
    trellis_reader.py verify STORE     reads everything, checks what the format says to check, prints a summary

It reads the manifest, the checkpoint (columns, index-order, rows chunks and footer), every segment of the journal
(change-set and migration records), checks every checksum, chunk number, sequence number and count that
journal-format.md names, replays checkpoint + records into an in-memory graph and prints it. It also recomputes each
schema's fingerprint from the schema a header holds, and each index's order from the rows, and compares them with what
the files store. Exit status: 0 clean, 1 damage or a disagreement with the document's rules, 2 usage.

Section names in comments ("§ Records (frames)") are those of journal-format.md.
"""

import base64
import math
import os
import struct
import sys
import unicodedata
import zlib

# ---------------------------------------------------------------------------------------------------------------
# Constants (§ File headers, § Records, § Manifest)

SEGMENT_MAGIC = bytes([0x89, 0x54, 0x52, 0x4A, 0x0D, 0x0A, 0x1A, 0x0A])
CHECKPOINT_MAGIC = bytes([0x89, 0x54, 0x52, 0x43, 0x0D, 0x0A, 0x1A, 0x0A])
MANIFEST_MAGIC = bytes([0x89, 0x54, 0x52, 0x4D, 0x0D, 0x0A, 0x1A, 0x0A])
READABLE_VERSIONS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
FRAGMENT_VERSION = 10  # § Records (frames): a record may span several frames (flags bits 0 and 1)
MORE_FRAGMENTS, CONTINUES_RECORD = 1, 2
MAX_RECORD = 512 << 20
MAX_HEADER = 16 << 20
MAX_RATIO = 1100
IGNORABLE = 0x80

T_CHANGE_SET, T_ROWS, T_FOOTER, T_COLUMNS, T_INDEX_ORDER, T_MIGRATION = 1, 2, 3, 4, 5, 6

# § The schema in every header: AttributeType and DeleteRule raw values.
TYPE_NAMES = {1: "Bool", 2: "Int", 3: "Int8", 4: "Int16", 5: "Int32", 6: "Int64", 7: "Double", 8: "Float",
              9: "String", 10: "Date", 11: "Data", 12: "UUID", 13: "URL", 14: "Decimal",
              15: "[String]", 16: "[Int]", 17: "Set<String>", 18: "[String: String]",  # 15-18: version 8
              19: "[String: MetadataValue]"}  # version 9
# The element type of a collection; a metadata dictionary's values are any scalar of METADATA_TAGS.
COLLECTION_TYPES = {15: "string", 16: "int", 17: "string", 18: "string", 19: "metadata"}
METADATA_TAGS = ("null", "bool", "int", "double", "string")
INT_TYPES = {2, 3, 4, 5, 6}
DOUBLE_TYPES = {7, 8}
DELETE_RULES = {1: "nullify", 2: "cascade", 3: "deny", 4: "noAction"}

# Column kinds (§ Columns chunk payload)
K_BOOL, K_INT, K_DOUBLE, K_DATE, K_STRING, K_OTHER = "bool", "int", "double", "date", "string", "other"
K_LIST = "list"  # version 8: collection attributes


def kind_of(type_raw):
    if type_raw == 1:
        return K_BOOL
    if type_raw in INT_TYPES:
        return K_INT
    if type_raw in DOUBLE_TYPES:
        return K_DOUBLE
    if type_raw == 10:
        return K_DATE
    if type_raw == 9:
        return K_STRING
    if type_raw in COLLECTION_TYPES:
        return K_LIST
    return K_OTHER


SECONDS_1970_TO_2001 = 978307200.0
MASK64 = (1 << 64) - 1


class Damage(Exception):
    """Something the document says a reader must refuse: class (as the document names it), file, offset, message."""

    def __init__(self, kind, file, offset, message):
        super().__init__(f"{file} at offset {offset}: {kind}: {message}")
        self.kind, self.file, self.offset, self.message = kind, file, offset, message


class Bad(Exception):
    """A decoding failure inside a payload; the caller turns it into a Damage of the right class."""


class HistoryBad(Bad):
    """A record that applies, but whose old values or deleted values contradict the state (class `history`)."""


def align8(n):
    return (n + 7) & ~7


def crc32(*parts):
    c = 0
    for p in parts:
        c = zlib.crc32(p, c)
    return c & 0xFFFFFFFF


# ---------------------------------------------------------------------------------------------------------------
# Primitives (introduction: little-endian, LEB128 varints, zigzag, strings)

class R:
    """A cursor over bytes; every read is bounds-checked."""

    def __init__(self, data, pos=0, end=None):
        self.b = data
        self.pos = pos
        self.end = len(data) if end is None else end

    def left(self):
        return self.end - self.pos

    def at_end(self):
        return self.pos >= self.end

    def take(self, n):
        if n < 0 or n > self.left():
            raise Bad(f"length {n} exceeds the {self.left()} bytes left at byte {self.pos}")
        out = self.b[self.pos:self.pos + n]
        self.pos += n
        return out

    def u8(self):
        if self.pos >= self.end:
            raise Bad(f"unexpected end at byte {self.pos}")
        v = self.b[self.pos]
        self.pos += 1
        return v

    def u16(self):
        return struct.unpack("<H", self.take(2))[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def varint(self):
        v = 0
        shift = 0
        while True:
            byte = self.u8()
            # At most 10 bytes; the 10th holds bit 63 only (0 or 1).
            if shift >= 64 or (shift == 63 and byte > 1):
                raise Bad(f"varint too long at byte {self.pos}")
            v |= (byte & 0x7F) << shift
            if byte < 0x80:
                return v
            shift += 7

    def signed(self):
        z = self.varint()
        v = (z >> 1) ^ -(z & 1)
        return to_int64(v)

    def count(self, minimum=1):
        n = self.varint()
        if n > self.left() // max(minimum, 1):
            raise Bad(f"count {n} exceeds the input at byte {self.pos}")
        return n

    def number(self, limit):
        n = self.varint()
        if n > limit:
            raise Bad(f"number {n} is out of range (at most {limit}) at byte {self.pos}")
        return n

    def blob(self):
        return self.take(self.count())

    def string(self):
        raw = self.blob()
        try:
            return raw.decode("utf-8")  # strict: invalid UTF-8 (surrogates included) is refused
        except UnicodeDecodeError:
            raise Bad(f"invalid UTF-8 at byte {self.pos}")


def to_int64(v):
    v &= MASK64
    return v - (1 << 64) if v >= 1 << 63 else v


# ---------------------------------------------------------------------------------------------------------------
# Values (§ Change-set payload, value tags). A value is a tuple (tag name, payload).

NULL = ("null", None)


def read_value(r):
    tag = r.u8()
    if tag == 0:
        return NULL
    if tag == 1:
        return ("bool", False)
    if tag == 2:
        return ("bool", True)
    if tag == 3:
        return ("int", r.signed())
    if tag == 4:
        return ("double", r.take(8))  # the bit pattern, kept as bytes so NaN payloads and -0.0 survive
    if tag == 5:
        return ("string", r.string())
    if tag == 6:
        return ("date", r.take(8))
    if tag == 7:
        return ("data", bytes(r.blob()))
    if tag == 8:
        return ("uuid", bytes(r.take(16)))
    if tag == 9:
        return ("url", r.string())
    if tag == 10:
        text = r.string()
        if not is_decimal_text(text):
            raise Bad(f"unreadable decimal {text!r}")
        return ("decimal", text)
    if tag == 11:
        return ("decimal", "NaN")
    if tag == 12:
        # Version 8: a collection's elements, scalars (tags 0-5); the attribute's type says which kinds it holds
        # (collection_fits): all ints or all strings, or for a version-9 metadata dictionary any of them.
        n = r.varint()
        if n > r.left():
            raise Bad(f"count {n} exceeds the input")
        elements = []
        for _ in range(n):
            t = r.b[r.pos] if r.pos < r.end else None
            if t not in (0, 1, 2, 3, 4, 5):
                raise Bad(f"value tag {t} in a list (only null, Booleans, numbers and strings)")
            elements.append(read_value(r))
        return ("list", tuple(elements))
    raise Bad(f"unknown value tag {tag} at byte {r.pos - 1}")


def is_decimal_text(text):
    # Decimal.description: optional '-', digits, optional '.' and digits.
    body = text[1:] if text.startswith("-") else text
    if not body:
        return False
    whole, _, fraction = body.partition(".")
    return (whole.isdigit() and whole.isascii()) and (fraction == "" or (fraction.isdigit() and fraction.isascii())) \
        and ("." not in body or fraction != "")


def f64(bits8):
    return struct.unpack("<d", bits8)[0]


def bits_of(bits8):
    return struct.unpack("<Q", bits8)[0]


def value_fits(kind, value):
    """§ Applying a change set: a stored value must be null or of its column's kind."""
    tag = value[0]
    if tag == "null":
        return True
    return {K_BOOL: ("bool",), K_INT: ("int",), K_DOUBLE: ("double",), K_DATE: ("date",), K_STRING: ("string",),
            K_OTHER: ("data", "uuid", "url", "decimal"), K_LIST: ("list",)}[kind].__contains__(tag)


def collection_fits(type_raw, value):
    """A stored collection: elements of the attribute's element type; a set's ascending (Swift's String order) and
    distinct."""
    elements = value[1]
    if type_raw == 19:
        # Version 9: each key (a string), ascending and distinct, followed by its value, a scalar of any kind.
        keys = elements[0::2]
        if len(elements) % 2 or any(k[0] != "string" for k in keys) \
                or any(v[0] not in METADATA_TAGS for v in elements[1::2]):
            return False
        keys = [string_key(k[1]) for k in keys]
        return all(a < b for a, b in zip(keys, keys[1:]))
    if any(e[0] != COLLECTION_TYPES[type_raw] for e in elements):
        return False
    if type_raw == 17:
        keys = [string_key(e[1]) for e in elements]
        return all(a < b for a, b in zip(keys, keys[1:]))
    if type_raw == 18:
        # Each key, ascending and distinct, followed by its value.
        keys = [string_key(e[1]) for e in elements[0::2]]
        return len(elements) % 2 == 0 and all(a < b for a, b in zip(keys, keys[1:]))
    return True


# ---------------------------------------------------------------------------------------------------------------
# Schema (§ The schema in every header, § The fingerprint)

class Attribute:
    def __init__(self, name, type_raw, optional, default):
        self.name, self.type, self.optional, self.default = name, type_raw, optional, default
        self.kind = kind_of(type_raw)


class Relationship:
    def __init__(self, name, target, inverse, to_many, rule, min_count, max_count, ordered=False):
        self.name, self.target_name, self.inverse_name = name, target, inverse
        self.to_many, self.rule, self.min_count, self.max_count = to_many, rule, min_count, max_count
        self.ordered = ordered  # § Ordered relationships (version 8): to-many byte 3
        self.target = None  # entity number
        self.inverse = None  # relationship position in the target


class Entity:
    def __init__(self, name, retired):
        self.name, self.retired = name, retired
        self.attributes, self.relationships, self.indexes = [], [], []  # index: (attribute positions, unique)


class Schema:
    def __init__(self, entities, history, codec_version):
        self.entities, self.history, self.codec_version = entities, history, codec_version
        self.numbers = {e.name: i for i, e in enumerate(entities)}
        self.fingerprint = fingerprint(self)

    def describe(self, entity, serial):
        name = self.entities[entity].name if entity < len(self.entities) else f"entity{entity}"
        return f"{name}#{serial}"


def decode_schema(data):
    r = R(data)
    version = r.u8()
    if version not in (1, 2):
        raise Bad(f"unknown schema encoding version {version}")
    entities = []
    for _ in range(r.count()):
        e = Entity(r.string(), False)
        if version >= 2:
            flags = r.u8()
            if flags > 1:
                raise Bad(f"entity flags {flags}")
            e.retired = flags == 1
        for _ in range(r.count()):
            name = r.string()
            type_raw = r.u8()
            if type_raw not in TYPE_NAMES:
                raise Bad(f"unknown attribute type {type_raw}")
            optional = r.u8() != 0
            default = read_value(r) if r.u8() != 0 else None
            e.attributes.append(Attribute(name, type_raw, optional, default))
        for _ in range(r.count()):
            name, target, inverse = r.string(), r.string(), r.string()
            cardinality = r.u8()
            to_many, ordered = cardinality != 0, cardinality == 3
            rule = r.u8()
            if rule not in DELETE_RULES:
                raise Bad(f"unknown delete rule {rule}")
            min_count = r.number(0x7FFFFFFF)
            max_plus_one = r.number(0x7FFFFFFF)
            e.relationships.append(Relationship(name, target, inverse, to_many, rule, min_count,
                                                None if max_plus_one == 0 else max_plus_one - 1, ordered))
        for _ in range(r.count()):
            names = [r.string() for _ in range(r.count())]
            e.indexes.append((names, r.u8() != 0))
        entities.append(e)
    history = []
    if version >= 2:
        for _ in range(r.count()):
            sequence = r.varint()
            micros = r.signed()
            from_fp, to_fp = r.u64(), r.u64()
            from_version, to_version = r.string(), r.string()
            steps = [r.string() for _ in range(r.count())]
            history.append((sequence, micros, from_fp, to_fp, from_version or None, to_version or None, steps))
    if not r.at_end():
        raise Bad("trailing bytes after the schema")
    resolve_schema(entities)
    return Schema(entities, history, version)


def resolve_schema(entities):
    """§ The schema in every header: the validity rules a decoded schema must meet."""
    numbers = {}
    for i, e in enumerate(entities):
        if not e.name or e.name in numbers:
            raise Bad(f"entity {i}: empty or duplicate name {e.name!r}")
        numbers[e.name] = i
    for e in entities:
        if e.retired and (e.attributes or e.relationships or e.indexes):
            raise Bad(f"retired entity {e.name} has properties")
        names = set()
        for a in e.attributes:
            if not a.name or a.name in names:
                raise Bad(f"{e.name}: empty or duplicate attribute name {a.name!r}")
            names.add(a.name)
        for r in e.relationships:
            if not r.name or r.name in names:
                raise Bad(f"{e.name}: empty or duplicate property name {r.name!r}")
            names.add(r.name)
            if r.target_name not in numbers or entities[numbers[r.target_name]].retired:
                raise Bad(f"{e.name}.{r.name}: unknown or retired target {r.target_name}")
            r.target = numbers[r.target_name]
            target = entities[r.target]
            back = [k for k, x in enumerate(target.relationships) if x.name == r.inverse_name]
            if not back:
                raise Bad(f"{e.name}.{r.name}: no inverse {r.inverse_name} on {r.target_name}")
            r.inverse = back[0]
            b = target.relationships[r.inverse]
            if b.target_name != e.name or b.inverse_name != r.name:
                raise Bad(f"{e.name}.{r.name}: inverse {r.target_name}.{b.name} does not point back")
        positions = {a.name: i for i, a in enumerate(e.attributes)}
        resolved = []
        for names, unique in e.indexes:
            if not names or any(n not in positions for n in names) or len(set(names)) != len(names):
                raise Bad(f"{e.name}: bad index {names}")
            if any(e.attributes[positions[n]].kind == K_LIST for n in names) and (len(names) > 1 or unique):
                raise Bad(f"{e.name}: index {names}: a collection attribute is indexed alone and not unique")
            resolved.append(([positions[n] for n in names], unique, names))
        e.indexes = resolved


def fingerprint(schema):
    """§ The fingerprint: FNV-1a (64 bits) of the canonical text, UTF-8."""
    parts = []
    for e in schema.entities:
        parts.append(f"E:{e.name}:retired;" if e.retired else f"E:{e.name};")
        for a in e.attributes:
            parts.append(f"A:{a.name}:{a.type}:{1 if a.optional else 0};")
        for r in e.relationships:
            maximum = "-" if r.max_count is None else str(r.max_count)
            parts.append(f"R:{r.name}:{r.target_name}:{r.inverse_name}:{1 if r.to_many else 0}:{r.rule}"
                         f":{r.min_count}:{maximum}{':o' if r.ordered else ''};")
        for positions, unique, names in e.indexes:
            parts.append(f"I:{','.join(names)}:{1 if unique else 0};")
    h = 0xCBF29CE484222325
    for byte in "".join(parts).encode("utf-8"):
        h ^= byte
        h = (h * 0x100000001B3) & MASK64
    return h


def hex16(v):
    return f"{v:016x}"


# ---------------------------------------------------------------------------------------------------------------
# Files: manifest, headers, frames (§ Manifest, § File headers, § Records (frames))

def read_manifest(path):
    data = open(path, "rb").read()
    if len(data) not in (72, 76):
        raise Damage("manifest", "MANIFEST", 0, f"{len(data)} bytes; a manifest has 76 (72 before version 5)")
    if data[0:8] != MANIFEST_MAGIC:
        raise Damage("manifest", "MANIFEST", 0, "bad magic")
    r = R(data, 8)
    version, flags, length = r.u16(), r.u16(), r.u32()
    generation, fp, cp_seq, cp_bytes, first, last = (r.u64() for _ in range(6))
    # Version 5: a durable sequence, then the checksum of everything before it; versions 1-4: the checksum of
    # bytes 0..<64, then 4 reserved bytes.
    durable = r.u64() if len(data) == 76 else 0
    covered = 72 if len(data) == 76 else 64
    if crc32(data[0:covered]) != struct.unpack_from("<I", data, covered)[0]:
        raise Damage("manifest", "MANIFEST", 0, "checksum mismatch")
    if version not in READABLE_VERSIONS:
        raise Damage("manifest", "MANIFEST", 0, f"format version {version}")
    if (version >= 5) != (len(data) == 76):
        raise Damage("manifest", "MANIFEST", 0, f"a version-{version} manifest of {len(data)} bytes")
    if version >= 5 and (flags != 0 or length != 76):
        raise Damage("manifest", "MANIFEST", 0, f"flags {flags} or length {length}")
    if version < 5 and (flags != 0 or length != 72 or data[68:72] != bytes(4)):
        raise Damage("manifest", "MANIFEST", 0, f"flags {flags}, length {length} or the reserved word")
    if not (1 <= first <= last) or last >= 1 << 60 or cp_seq >= 1 << 60 or generation >= 1 << 60 \
            or durable >= 1 << 60:
        raise Damage("manifest", "MANIFEST", 0, f"bad ranges first {first} last {last}")
    return dict(version=version, generation=generation, fingerprint=fp, checkpoint=cp_seq,
                checkpoint_bytes=cp_bytes, first=first, last=last, length=length, flags=flags, durable=durable)


CRC_TABLE = []
for _n in range(256):
    _c = _n
    for _ in range(8):
        _c = 0xEDB88320 ^ (_c >> 1) if _c & 1 else _c >> 1
    CRC_TABLE.append(_c)


def frame_header_size(version):
    """§ Records (frames): F = 40 in files of version 6 (the watermark at offset 32), 32 before."""
    return 40 if version >= 6 else 32


def whole_sectors(frame, offset):
    """No 512-byte sector (aligned to file offsets) has its part of the frame all zero."""
    start = offset // 512 * 512
    while start < offset + len(frame):
        if not any(frame[max(start, offset) - offset:min(start + 512, offset + len(frame)) - offset]):
            return False
        start += 512
    return True


def is_length_rot(data, offset, salt, fh):
    """§ Recovery, step 4: one flipped bit of the stored length S of a whole last frame (payloads up to 64 KiB)."""
    head = bytearray(data[offset:offset + fh])
    checksum, stored_len = struct.unpack_from("<II", head, 0)
    for bit in range(32):
        length = stored_len ^ (1 << bit)
        if length > 64 << 10 or (fh + length + 7) // 8 * 8 > len(data) - offset:
            continue
        struct.pack_into("<I", head, 4, length)
        frame = bytes(head) + data[offset + fh:offset + fh + length]
        if crc32(struct.pack("<Q", salt) + frame[4:]) != checksum or any(data[offset + fh + length:]):
            continue
        if whole_sectors(frame, offset):
            return True
    return False


def is_rot(data, offset, salt, fh=32):
    """Whether the last frame at offset, which failed its checksum or its length check, is rot rather than a torn
    write (§ Recovery, step 4): one flipped bit of its length from a whole frame; or whole (plausible length, in the
    file, only zeros after its F + S bytes), failing its checksum, no 512-byte sector part of it all zero, and either
    one flipped bit from checking out (payloads up to 64 KiB) or a non-zero last byte."""
    if len(data) - offset < fh:
        return False
    head = data[offset:offset + fh]
    if not any(head):
        return False
    if is_length_rot(data, offset, salt, fh):
        return True
    checksum, stored_len = struct.unpack_from("<II", head, 0)
    size = (fh + stored_len + 7) // 8 * 8
    if stored_len > MAX_RECORD or size > len(data) - offset:
        return False
    extent = fh + stored_len
    if any(data[offset + extent:]):
        return False
    frame = data[offset:offset + extent]
    if not whole_sectors(frame, offset):
        return False
    message = struct.pack("<Q", salt) + frame[4:]
    difference = crc32(message) ^ checksum
    if difference == 0:
        return False  # it checks out: damaged elsewhere (its padding), not this rule's
    if stored_len <= 64 << 10:
        if bin(difference).count("1") == 1:
            return True
        effect = [CRC_TABLE[1 << b] for b in range(8)]
        for _ in range(len(message) - 1, 7, -1):
            if difference in effect:
                return True
            effect = [CRC_TABLE[e & 0xFF] ^ (e >> 8) for e in effect]
    return frame[-1] != 0


class Header:
    pass


def read_header(data, magic, name):
    """Returns the parsed header; raises Damage(header)."""
    def bad(msg, offset=0):
        return Damage("header", name, offset, msg)
    if len(data) < 64 or data[0:8] != magic:
        raise bad("bad magic, or shorter than a header")
    r = R(data, 8)
    h = Header()
    h.version, h.flags, h.length = r.u16(), r.u16(), r.u32()
    if h.version not in READABLE_VERSIONS:
        raise bad(f"format version {h.version}; this reader reads versions 1 to 10")
    if h.length < 64 or h.length > MAX_HEADER or h.length > len(data):
        raise bad(f"header length {h.length}")
    h.id, h.sequence, h.salt, h.stored_fingerprint = r.u64(), r.u64(), r.u64(), r.u64()
    schema_length = r.u32()
    r.u32()
    if 60 + schema_length > h.length:
        raise bad(f"schema length {schema_length} does not fit a header of {h.length} bytes")
    h.schema_bytes = data[56:56 + schema_length]
    stored_crc = struct.unpack("<I", data[56 + schema_length:60 + schema_length])[0]
    if crc32(data[0:56 + schema_length]) != stored_crc:
        raise bad("header checksum mismatch")
    # § File headers: H is exactly 60 + L rounded up to a multiple of 8; frames start at H.
    if h.length != align8(60 + schema_length):
        raise bad(f"header length {h.length} is not {align8(60 + schema_length)} (60 + L rounded up to 8)")
    # § File headers: flags and reserved 0, padding zero, field 24 below 2^60.
    if h.flags != 0 or struct.unpack("<I", data[52:56])[0] != 0 or any(data[60 + schema_length:h.length]):
        raise bad("nonzero flags, reserved field or padding")
    if h.sequence >= 1 << 60:
        raise bad(f"sequence number {h.sequence} out of range")
    try:
        h.schema = decode_schema(h.schema_bytes)
    except Bad as e:
        raise bad(f"schema: {e}", 56)
    return h


class Frame:
    pass


def scan_frame(data, offset, salt, other_salts, known_types, name, fh=32):
    """One step of § Records (frames): ('end'), ('frame', Frame) or ('damage', class, message). fh is the frame
    header's size F in the file's version (frame_header_size)."""
    left = len(data) - offset
    if left <= 0:
        return ("end",)
    if left < fh:
        zero = not any(data[offset:])
        return ("damage", "zeroed", f"{left} zero bytes") if zero else \
            ("damage", "length", f"a partial frame header of {left} bytes")
    head = data[offset:offset + fh]
    if not any(head):
        return ("damage", "zeroed", "a zeroed frame header")
    checksum, stored_len, ftype, codec, flags, raw_len, seq, time = struct.unpack_from("<IIBBHIQq", head, 0)
    watermark = struct.unpack_from("<Q", head, 32)[0] if fh > 32 else 0
    frame_size = align8(fh + stored_len)
    if stored_len > MAX_RECORD or frame_size > left:
        return ("damage", "length", f"stored length {stored_len} exceeds the {left - fh} bytes left in the file")
    stored = data[offset + fh:offset + fh + stored_len]
    salt_bytes = struct.pack("<Q", salt)
    if crc32(salt_bytes, head[4:fh], stored) != checksum:
        for other in other_salts:
            if other != salt and crc32(struct.pack("<Q", other), head[4:fh], stored) == checksum:
                return ("damage", "salt", f"a valid record of another file (salt {other}) in sequence position")
        return ("damage", "checksum", f"checksum mismatch for record {seq} of {stored_len} bytes")
    if ftype not in known_types and not ftype & IGNORABLE:
        return ("damage", "unknown type", f"record type {ftype} is unknown to this build")
    if codec not in (0, 1):
        return ("damage", "unknown type", f"compression codec {codec} is unknown to this build")
    if codec == 0 and raw_len != stored_len:
        return ("damage", "length", f"uncompressed length {raw_len} is impossible")
    if codec == 1 and raw_len > min(MAX_RECORD, stored_len * MAX_RATIO + 64):
        return ("damage", "length", f"uncompressed length {raw_len} is impossible")
    f = Frame()
    f.offset, f.type, f.codec, f.flags, f.raw_len, f.sequence, f.time = offset, ftype, codec, flags, raw_len, seq, time
    f.stored, f.size, f.watermark = stored, frame_size, watermark
    return ("frame", f)


def scan_record(data, offset, salt, other_salts, known_types, name, fh, version):
    """One record of § Records (frames): a frame, or (version 10) a first frame and the frames continuing it, each
    checked; ('frame', Frame) with the parts in f.parts, or ('damage', class, message, offset of the frame that
    failed), reported at the record's start."""
    step = scan_frame(data, offset, salt, other_salts, known_types, name, fh)
    if step[0] != "frame":
        return step + (offset,) if step[0] == "damage" else step
    first = step[1]
    known_flags = MORE_FRAGMENTS | CONTINUES_RECORD if version >= FRAGMENT_VERSION else 0
    if first.flags & ~known_flags:
        return ("damage", "unknown type", f"frame flags 0x{first.flags:x} name a feature this build does not know",
                offset)
    if first.flags & CONTINUES_RECORD:
        return ("damage", "decode", f"record {first.sequence} at offset {offset} continues a record, but a record "
                                    f"starts here", offset)
    parts, last, at = [first], first, offset + first.size
    while last.flags & MORE_FRAGMENTS:
        what = f"frame {len(parts) + 1} of record {first.sequence} (at offset {at})"
        step = scan_frame(data, at, salt, other_salts, known_types, name, fh)
        if step[0] == "end":
            return ("damage", "length", f"the file ends before {what}", at)
        if step[0] == "damage":
            return ("damage", step[1], f"{what}: {step[2]}", at)
        g = step[1]
        if g.flags & ~known_flags:
            return ("damage", "unknown type", f"{what}: frame flags 0x{g.flags:x} name a feature this build does "
                                              f"not know", at)
        if not g.flags & CONTINUES_RECORD or g.type != first.type or g.sequence != first.sequence or \
                g.time != first.time or g.watermark != first.watermark:
            return ("damage", "decode", f"{what} does not continue it", at)
        parts.append(g)
        at += g.size
        last = g
    if len(parts) == 1:
        first.parts = parts
        return ("frame", first)
    f = Frame()
    f.offset, f.type, f.flags, f.sequence, f.time, f.watermark = offset, first.type, 0, first.sequence, first.time, \
        first.watermark
    f.codec = 1 if any(g.codec == 1 for g in parts) else 0
    f.raw_len = sum(g.raw_len for g in parts)
    f.stored = b"".join(g.stored for g in parts)
    f.size = at - offset
    f.parts = parts
    return ("frame", f)


def frame_payload(f, name):
    parts = getattr(f, "parts", [f])
    if len(parts) > 1:
        return b"".join(frame_payload(g, name) for g in parts)
    if f.codec == 0:
        return f.stored
    d = zlib.decompressobj()
    try:
        out = d.decompress(f.stored, f.raw_len + 1)
    except zlib.error as e:
        raise Damage("decode", name, f.offset, f"payload does not inflate: {e}")
    if not d.eof or len(out) != f.raw_len or f.raw_len == 0:
        raise Damage("decode", name, f.offset, "payload does not inflate to its uncompressed length")
    return out


def next_valid_frame(data, offset, salt, known_types, name, fh=32, version=8):
    """The next aligned offset where a whole record starts (never a frame that continues one)."""
    candidate = align8(offset + 1)
    while candidate + fh <= len(data):
        step = scan_record(data, candidate, salt, [], known_types, name, fh, version)
        if step[0] == "frame":
            return candidate
        candidate += 8
    return None


def judge_hole(data, resume, missing, salt, name, fh, version=8):
    """§ Recovery, step 4, unacknowledged hole: reads every valid frame from resume (the first valid one after the
    damage) to the end. ('unacknowledged', records, highest watermark or None) when each is numbered at least
    `missing` with a watermark below it; ('acknowledged', sequence, offset, watermark) for the first whose watermark
    is at least `missing`; ('unexplained',) for a frame numbered below it."""
    offset, records, highest = resume, 0, None
    types = {T_CHANGE_SET, T_MIGRATION}
    while True:
        step = scan_record(data, offset, salt, [], types, name, fh, version)
        if step[0] == "end":
            return ("unacknowledged", records, highest)
        if step[0] == "damage":
            if step[1] == "zeroed" and not any(data[offset:]):
                return ("unacknowledged", records, highest)
            offset = next_valid_frame(data, offset, salt, types, name, fh, version)
            if offset is None:
                return ("unacknowledged", records, highest)
            continue
        f = step[1]
        offset += f.size
        if f.type & IGNORABLE:
            continue
        if f.sequence < missing:
            return ("unexplained",)
        if f.watermark >= missing:
            return ("acknowledged", f.sequence, f.offset, f.watermark)
        records += 1
        highest = f.watermark if highest is None else max(highest, f.watermark)


# ---------------------------------------------------------------------------------------------------------------
# The graph and how a change set applies (§ Applying a change set)

class Table:
    def __init__(self, entity):
        self.rows = {}  # serial -> [values list, links list (each a set of serials; to-one: a set of at most 1)]
        self.max_serial = 0
        self.entity = entity


class Graph:
    def __init__(self, schema):
        self.schema = schema
        self.sequence = 0
        self.tables = [Table(e) for e in schema.entities]

    def live(self, entity, serial):
        return serial in self.tables[entity].rows


def reject(msg):
    raise Bad(f"change set does not fit the graph: {msg}")


class OrderedLinks(list):
    """§ Ordered relationships: an ordered to-many end's targets, in list order, each once; `add` appends."""

    def add(self, target):
        if target not in self:
            self.append(target)

    def discard(self, target):
        if target in self:
            self.remove(target)


def new_links(relationships):
    return [OrderedLinks() if rel.ordered else set() for rel in relationships]


def add_target(graph, entity, serial, k, target):
    """Adds one end; for a to-one end returns the target it replaced (0 for none)."""
    links = graph.tables[entity].rows[serial][1][k]
    rel = graph.schema.entities[entity].relationships[k]
    if rel.to_many:
        links.add(target)
        return 0
    old = next(iter(links), 0)
    links.clear()
    links.add(target)
    return 0 if old == target else old


def remove_target(graph, entity, serial, k, target):
    row = graph.tables[entity].rows.get(serial)
    if row is not None:
        row[1][k].discard(target)


def identical(a, b):
    """Value.isIdentical: same tag and bits (doubles and dates bit for bit, -0.0 apart from 0.0; any two NaN
    doubles equal)."""
    if a[0] != b[0]:
        return False
    if a[0] in ("double", "date"):
        same = bytes(a[1]) == bytes(b[1])
        return same or (a[0] == "double" and math.isnan(f64(a[1])) and math.isnan(f64(b[1])))
    return a == b


def apply_change_set(graph, cs, sequence, check_history=False):
    """Applies a change set; with check_history (verify), updates' old values and deletes' values and targets must
    be those the graph holds where they apply (§ Recovery / verify)."""
    schema = graph.schema
    earlier = {}
    # The first contradiction of the history: the record still applies (as recovery applies it), and only if it
    # does is it class `history` (a record that does not apply either is `decode`).
    contradictions = []
    # 1. inserts, in order
    for entity, serial, values in cs["inserts"]:
        check_id(schema, entity, serial)
        e = schema.entities[entity]
        if len(values) != len(e.attributes):
            reject(f"wrong number of values for insert of {schema.describe(entity, serial)}")
        table = graph.tables[entity]
        if serial in table.rows:
            reject(f"insert of existing object {schema.describe(entity, serial)}")
        for a, v in zip(e.attributes, values):
            if not value_fits(a.kind, v):
                reject(f"a value of the wrong type for {schema.describe(entity, serial)}")
        table.rows[serial] = [list(values), new_links(e.relationships)]
        table.max_serial = max(table.max_serial, serial)
    # 2. updates, in order
    for entity, serial, changes in cs["updates"]:
        check_id(schema, entity, serial)
        e = schema.entities[entity]
        row = graph.tables[entity].rows.get(serial)
        if row is None:
            reject(f"update of missing object {schema.describe(entity, serial)}")
        for attribute, old, new in changes:
            if attribute >= len(e.attributes) or not value_fits(e.attributes[attribute].kind, new):
                reject(f"update with a bad attribute or value type for {schema.describe(entity, serial)}")
            if check_history:
                held = earlier.get((entity, serial, attribute), row[0][attribute])
                if not identical(old, held):
                    contradictions.append(f"update says attribute '{e.attributes[attribute].name}' was {old}, but it "
                                          f"holds {held}, in {schema.describe(entity, serial)}")
                earlier[(entity, serial, attribute)] = new
        for attribute, old, new in changes:
            row[0][attribute] = new
    # 3. relationship edits, in order
    for kind, s_entity, s_serial, k, t_entity, t_serial, position, _ in cs["edits"]:
        check_id(schema, s_entity, s_serial)
        check_id(schema, t_entity, t_serial)
        rels = schema.entities[s_entity].relationships
        if k >= len(rels):
            reject(f"edit of an unknown relationship of {schema.describe(s_entity, s_serial)}")
        rel = rels[k]
        if rel.target != t_entity:
            reject(f"edit links the wrong entity to {schema.describe(s_entity, s_serial)}")
        if kind == 3:
            # place: the target inserted at, or moved to, `position` of an ordered list; the inverse follows
            if not rel.ordered:
                reject(f"place edit of an unordered relationship of {schema.describe(s_entity, s_serial)}")
            if not graph.live(s_entity, s_serial):
                reject(f"place from missing object {schema.describe(s_entity, s_serial)}")
            if not graph.live(t_entity, t_serial):
                reject(f"place of missing object {schema.describe(t_entity, t_serial)}")
            links = graph.tables[s_entity].rows[s_serial][1][k]
            held = t_serial in links
            if position > len(links) - (1 if held else 0):
                reject(f"place edit at position {position}, out of range, in {schema.describe(s_entity, s_serial)}")
            links.discard(t_serial)
            links.insert(position, t_serial)
            previous_owner = add_target(graph, t_entity, t_serial, rel.inverse, s_serial)
            if previous_owner:
                remove_target(graph, s_entity, previous_owner, k, t_serial)
        elif kind == 1:
            if not graph.live(s_entity, s_serial):
                reject(f"link from missing object {schema.describe(s_entity, s_serial)}")
            if not graph.live(t_entity, t_serial):
                reject(f"link to missing object {schema.describe(t_entity, t_serial)}")
            displaced = add_target(graph, s_entity, s_serial, k, t_serial)
            if displaced:
                remove_target(graph, t_entity, displaced, rel.inverse, s_serial)
            previous_owner = add_target(graph, t_entity, t_serial, rel.inverse, s_serial)
            if previous_owner:
                remove_target(graph, s_entity, previous_owner, k, t_serial)
        else:
            remove_target(graph, s_entity, s_serial, k, t_serial)
            remove_target(graph, t_entity, t_serial, rel.inverse, s_serial)
    # 4. deletes, in order: the graph's own links (not the record's) say which inverse ends to clean
    doomed = {(entity, serial) for entity, serial, _, _ in cs["deletes"]}
    if check_history:
        for entity, serial, values, links in cs["deletes"]:
            check_id(schema, entity, serial)
            row = graph.tables[entity].rows.get(serial)
            if row is None:
                continue  # refused below
            if len(values) != len(row[0]) or not all(identical(a, b) for a, b in zip(values, row[0])):
                contradictions.append(f"delete says values {values}, but it holds {row[0]}, in "
                                      f"{schema.describe(entity, serial)}")
            said = [x if rel.ordered else sorted(x) for (_, x), rel in zip(links, schema.entities[entity].relationships)]
            if said != [list(x) if isinstance(x, OrderedLinks) else sorted(x) for x in row[1]]:
                contradictions.append(f"delete says targets {links}, but it holds {row[1]}, in "
                                      f"{schema.describe(entity, serial)}")
    for entity, serial, values, links in cs["deletes"]:
        check_id(schema, entity, serial)
        table = graph.tables[entity]
        row = table.rows.get(serial)
        if row is None:
            reject(f"delete of missing object {schema.describe(entity, serial)}")
        for k, rel in enumerate(schema.entities[entity].relationships):
            if rel.rule == 4:  # noAction: the targets keep naming the deleted object
                continue
            for t in sorted(row[1][k]):
                if (rel.target, t) in doomed:
                    continue
                remove_target(graph, rel.target, t, rel.inverse, serial)
        del table.rows[serial]
    graph.sequence = sequence
    if contradictions:
        raise HistoryBad(f"change set does not fit the graph: {contradictions[0]}")


def check_id(schema, entity, serial):
    if entity >= len(schema.entities) or serial == 0:
        reject(f"an object of unknown entity {entity} or serial 0")


def decode_change_set(payload, schema, version=1):
    """§ Change-set payload (type 1); from version 7 a record ends with its author (embedded change sets never do)."""
    r = R(payload)
    n_entities = len(schema.entities)

    def entity():
        return r.number(n_entities - 1)

    def value(e, a):
        # Version 8: a collection's elements must fit its attribute (a set's and a dictionary's keys ascending).
        v = read_value(r)
        if v[0] == "list":
            attributes = schema.entities[e].attributes
            if a >= len(attributes) or attributes[a].kind != K_LIST or not collection_fits(attributes[a].type, v):
                raise Bad(f"a list for attribute {a}, which does not hold it")
        return v

    cs = {"inserts": [], "updates": [], "edits": [], "deletes": []}
    for _ in range(r.count(3)):
        e, serial = entity(), r.varint()
        cs["inserts"].append((e, serial, [value(e, a) for a in range(r.count())]))
    for _ in range(r.count(3)):
        e, serial = entity(), r.varint()
        changes = []
        for _ in range(r.count(3)):
            attribute = r.number(0xFFFFFFFF)
            changes.append((attribute, value(e, attribute), value(e, attribute)))
        cs["updates"].append((e, serial, changes))
    for _ in range(r.count(6)):
        kind = r.u8()
        if kind not in (1, 2, 3):
            raise Bad(f"unknown edit kind {kind}")
        s_e, s_serial = entity(), r.varint()
        k = r.number(0xFFFFFFFF)
        t_e, t_serial = entity(), r.varint()
        position, previous = 0, None
        if kind == 3:  # place (version 8): position, previous position + 1 (0: it was not in the list)
            position = r.number(0x7FFFFFFF)
            previous = r.number(0x7FFFFFFF)
            previous = None if previous == 0 else previous - 1
        cs["edits"].append((kind, s_e, s_serial, k, t_e, t_serial, position, previous))
    for _ in range(r.count(4)):
        e, serial = entity(), r.varint()
        values = [value(e, a) for a in range(r.count())]
        rels = schema.entities[e].relationships
        n = r.count()
        if n != len(rels):
            raise Bad(f"delete lists {n} relationships; its entity has {len(rels)}")
        links = []
        for rel in rels:
            links.append((rel.target, [r.varint() for _ in range(r.count())]))
        cs["deletes"].append((e, serial, values, links))
    if version >= 7:
        flag = r.u8()
        if flag not in (1, 2):
            raise Bad(f"author flag {flag} (1 or 2 expected)")
        cs["author"] = r.string() if flag == 2 else None
    if not r.at_end():
        raise Bad(f"{r.left()} trailing bytes")
    return cs


# ---------------------------------------------------------------------------------------------------------------
# Migration records (§ Schema evolution, migration record payload) and how one applies

def decode_migration(payload, base):
    r = R(payload)
    version = r.u8()
    if version != 1:
        raise Bad(f"unknown migration record version {version}")
    rec = {"from": r.u64(), "to": r.u64()}
    rec["steps"] = [r.string() for _ in range(r.count())]
    stages = []
    before = base
    for _ in range(r.count()):
        from_version, to_version = r.string(), r.string()
        schema = decode_schema(r.blob())
        if schema.history:
            raise Bad("a stage schema with a history")
        maps = []
        for e in schema.entities:
            source = optional_position(r, len(before.entities))
            src = before.entities[source] if source is not None else None
            if r.count() != len(e.attributes):
                raise Bad("attribute count")
            attributes = []
            for a in e.attributes:
                if src is None:
                    if r.varint() != 0:
                        raise Bad("a new entity with a stored column")
                    r.u8()
                    attributes.append((None, False, False))
                    continue
                s = optional_position(r, len(src.attributes))
                flags = r.u8()
                if flags >= 4:
                    raise Bad(f"attribute flags {flags}")
                to_double, fill = bool(flags & 1), bool(flags & 2)
                if s is not None:
                    from_kind = src.attributes[s].kind
                    fits = (from_kind == K_INT and a.kind == K_DOUBLE) if to_double else from_kind == a.kind
                    if not fits:
                        raise Bad(f"{e.name}.{a.name} maps to a column of another kind")
                attributes.append((s, to_double, fill))
            if r.count() != len(e.relationships):
                raise Bad("relationship count")
            relationships = []
            for rel in e.relationships:
                if src is None:
                    if r.varint() != 0:
                        raise Bad("a new entity with stored links")
                    relationships.append(None)
                    continue
                s = optional_position(r, len(src.relationships))
                if s is not None and src.relationships[s].to_many != rel.to_many:
                    raise Bad(f"{e.name}.{rel.name} maps to links of another kind")
                relationships.append(s)
            maps.append((source, attributes, relationships))
        changes = None
        if r.u8() != 0:
            changes = decode_change_set(r.blob(), schema)
        stages.append({"from_version": from_version or None, "to_version": to_version or None, "schema": schema,
                       "maps": maps, "changes": changes})
        before = schema
    if not r.at_end():
        raise Bad("trailing bytes")
    if not stages:
        raise Bad("a migration without stages")
    rec["stages"] = stages
    return rec


def optional_position(r, count):
    v = r.varint()
    if v > count:
        raise Bad(f"position {v - 1} of {count}")
    return None if v == 0 else v - 1


def normalized_default(a):
    """The value a new column (or a filled null) gets: the default converted to the attribute's type, else null."""
    d = a.default
    if d is None or d[0] == "null":
        return NULL
    if a.kind == K_DOUBLE:
        if d[0] == "int":
            x = float(d[1])
        elif d[0] == "double":
            x = f64(d[1])
        else:
            return NULL
        if a.type == 8:  # Float: rounded to single precision
            x = float_round(x)
        return ("double", struct.pack("<d", x))
    if a.type == 14 and d[0] == "int":
        return ("decimal", str(d[1]))
    if a.kind == K_INT and d[0] == "int":
        limits = {3: 8, 4: 16, 5: 32}
        if a.type in limits and not -(1 << (limits[a.type] - 1)) <= d[1] < 1 << (limits[a.type] - 1):
            return NULL
        return d
    if value_fits(a.kind, d):
        return d
    return NULL


def float_round(x):
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def shaped(links, rel):
    """A relationship's targets as `rel` holds them: an ordered list keeps its order, a set becomes a list in serial
    order, a list becomes a set."""
    if not rel.ordered:
        return set(links)
    return OrderedLinks(links if isinstance(links, OrderedLinks) else sorted(links))


def apply_migration(graph, rec, sequence):
    for stage in rec["stages"]:
        schema = stage["schema"]
        out = Graph(schema)
        for t, (source, attributes, relationships) in enumerate(stage["maps"]):
            if source is None:
                continue
            src = graph.tables[source]
            e = schema.entities[t]
            table = out.tables[t]
            table.max_serial = src.max_serial
            if e.retired:
                continue
            fills = [normalized_default(a) for a in e.attributes]
            for serial, (values, links) in src.rows.items():
                new_values = []
                for a, (s, to_double, fill) in enumerate(attributes):
                    if s is None:
                        new_values.append(fills[a])
                        continue
                    v = values[s]
                    if to_double and v[0] == "int":
                        v = ("double", struct.pack("<d", float(v[1])))
                    if fill and v[0] == "null" and fills[a][0] != "null":
                        v = fills[a]
                    new_values.append(v)
                new_links = [shaped(links[s] if s is not None else (), rel) for s, rel in zip(relationships, e.relationships)]
                table.rows[serial] = [new_values, new_links]
        out.sequence = graph.sequence
        graph = out
        if stage["changes"] is not None:
            apply_change_set(graph, stage["changes"], sequence)
    graph.sequence = sequence
    return graph


# ---------------------------------------------------------------------------------------------------------------
# Checkpoints (§ Checkpoints, § Columns chunk payload, § Index-order chunk payload)

def section(r):
    """§ Columns chunk payload, section: returns a reader over its contents."""
    codec = r.u8()
    length = r.number(MAX_RECORD)
    if codec == 0:
        start = r.pos
        r.take(length)
        return R(r.b, start, start + length)
    if codec == 1:
        stored = r.take(r.count())
        if length == 0 or length > len(stored) * MAX_RATIO + 64:
            raise Bad(f"a compressed section of {length} bytes")
        d = zlib.decompressobj()
        try:
            raw = d.decompress(bytes(stored), length + 1)
        except zlib.error as e:
            raise Bad(f"a section does not inflate: {e}")
        if len(raw) != length or not d.eof:
            raise Bad("a compressed section does not inflate to its length")
        return R(raw)
    raise Bad(f"section codec {codec}")


def expect_end(r):
    if not r.at_end():
        raise Bad(f"{r.left()} stray bytes in a section")


def unpack_bits(data, count, width):
    """count values of `width` bits, LSB first."""
    if width == 0:
        return [0] * count
    mask = (1 << width) - 1
    out = []
    nbytes = (width + 7) // 8 + 1
    for i in range(count):
        bit = i * width
        chunk = data[bit >> 3:(bit >> 3) + nbytes]
        out.append((int.from_bytes(chunk, "little") >> (bit & 7)) & mask)
    return out


def frame_of_reference(r, count):
    base = r.signed()
    width = r.u8()
    if width > 64:
        raise Bad(f"bit width {width}")
    data = r.take((count * width + 7) // 8)
    return [to_int64(base + v) for v in unpack_bits(data, count, width)]


def ints_block(r, count):
    """§ ints block: signed 64-bit values, arithmetic modulo 2^64."""
    mode = r.u8()
    if mode == 0:
        return frame_of_reference(r, count)
    if mode == 1:
        if count == 0:
            raise Bad("a delta block of no values")
        first = r.signed()
        deltas = frame_of_reference(r, count - 1)
        out = [first]
        for d in deltas:
            out.append(to_int64(out[-1] + d))
        return out
    raise Bad(f"ints mode {mode}")


def bitmap(data, n):
    """Bits 0..n-1 (LSB first) of ⌈n/8⌉ bytes; the bits past n must be 0."""
    if n % 8 and data[-1] >> (n % 8):
        raise Bad("stray bits past the end of a bitmap")
    return [bool(data[i >> 3] >> (i & 7) & 1) for i in range(n)]


def unpack_alphabet(r, total):
    size = r.u8() + 1
    if size > 64:
        raise Bad(f"an alphabet of {size}")
    alphabet = r.take(size)
    width = 0 if size == 1 else (size - 1).bit_length()
    codes = unpack_bits(r.take((total * width + 7) // 8), total, width)
    if codes and max(codes) >= size:
        raise Bad("a text code beyond its alphabet")
    return bytes(alphabet[c] for c in codes)


def decode_columns_chunk(payload, schema):
    r = R(payload)
    entity = r.number(len(schema.entities) - 1)
    e = schema.entities[entity]
    n = r.number(4159)  # CheckpointColumns.maxRows: what the writer cuts at
    if n == 0:
        raise Bad("a chunk of no rows")
    s = section(r)
    serials = [v & MASK64 for v in ints_block(s, n)]
    expect_end(s)
    previous = 0
    for serial in serials:
        if serial <= previous:
            raise Bad(f"serial {serial} is zero or out of order")
        previous = serial
    columns = []
    for a in e.attributes:
        c = section(r)
        flag = c.u8()
        if flag == 1:
            nulls = bitmap(c.take((n + 7) // 8), n)
        elif flag == 0:
            nulls = [False] * n
        else:
            raise Bad(f"null flag {flag}")
        k = n - sum(nulls)
        if a.kind == K_BOOL:
            live = [("bool", b) for b in bitmap(c.take((k + 7) // 8), k)] if k else []
            if k == 0:
                c.take(0)
        elif a.kind == K_INT:
            live = [("int", v) for v in ints_block(c, k)]
        elif a.kind in (K_DOUBLE, K_DATE):
            layout = c.u8()
            if layout != 1:
                raise Bad(f"double layout {layout}")
            expect_end(c)
            planes = []
            for _ in range(8):
                p = section(r)
                planes.append(p.take(k))
                expect_end(p)
            tag = "double" if a.kind == K_DOUBLE else "date"
            live = [(tag, bytes(planes[j][i] for j in range(8))) for i in range(k)]
        elif a.kind == K_STRING:
            lengths = ints_block(c, k)
            text_layout = c.u8()
            expect_end(c)
            t = section(r)
            total = 0
            for length in lengths:
                if length < 0 or length > MAX_RECORD - total:
                    raise Bad(f"string length {length}")
                total += length
            if text_layout == 0:
                text = t.take(t.left())
            elif text_layout == 1:
                if total > 16 << 20:
                    raise Bad("too much packed text")
                text = unpack_alphabet(t, total)
            else:
                raise Bad(f"text layout {text_layout}")
            if len(text) != total:
                raise Bad("text length does not match the string lengths")
            live = []
            at = 0
            for length in lengths:
                try:
                    live.append(("string", bytes(text[at:at + length]).decode("utf-8")))
                except UnicodeDecodeError:
                    raise Bad("invalid UTF-8 in a string")
                at += length
            c = t
        else:
            live = []
            for _ in range(k):
                v = read_value(c)
                if a.kind == K_LIST:
                    if v[0] != "list" or not collection_fits(a.type, v):
                        raise Bad(f"a {v[0]} in a column of {TYPE_NAMES[a.type]}")
                elif v[0] not in ("data", "uuid", "url", "decimal"):
                    raise Bad(f"a {v[0]} in a column of {TYPE_NAMES[a.type]}")
                live.append(v)
        expect_end(c)
        it = iter(live)
        columns.append([NULL if null else next(it) for null in nulls])
    links = []
    total_targets = 0
    for rel in e.relationships:
        l = section(r)
        counts = ints_block(l, n)
        for count in counts:
            if count < 0 or count > (1 << 24) - total_targets:
                raise Bad(f"target count {count}")
            if count > 1 and not rel.to_many:
                raise Bad(f"to-one with {count} targets")
            total_targets += count
        targets = [v & MASK64 for v in ints_block(l, sum(counts))]
        expect_end(l)
        rows = []
        at = 0
        for count in counts:
            run = targets[at:at + count]
            if rel.ordered:  # in list order, each once
                if any(x == 0 for x in run) or len(set(run)) != len(run):
                    raise Bad("targets zero or twice")
                rows.append(OrderedLinks(run))
                at += count
                continue
            if any(x == 0 for x in run) or any(run[i] >= run[i + 1] for i in range(len(run) - 1)):
                raise Bad("targets zero or out of order")
            rows.append(set(run))
            at += count
        links.append(rows)
    if not r.at_end():
        raise Bad("trailing bytes")
    return entity, serials, columns, links


def decode_rows_chunk(payload, schema, graph):
    """Version-1 rows chunk (type 2)."""
    r = R(payload)
    entity = r.number(len(schema.entities) - 1)
    e = schema.entities[entity]
    table = graph.tables[entity]
    for _ in range(r.count(1 + len(e.attributes) + len(e.relationships))):
        serial = r.varint()
        values = [read_value(r) for _ in e.attributes]
        if serial == 0 or serial in table.rows or not all(value_fits(a.kind, v) for a, v in zip(e.attributes, values)):
            raise Bad(f"row {serial} is a duplicate or has a value of the wrong type")
        links = []
        for rel in e.relationships:
            n = r.count()
            if n > 1 and not rel.to_many:
                raise Bad(f"to-one with {n} targets")
            targets = [r.varint() for _ in range(n)]
            if 0 in targets:
                raise Bad("target serial 0")
            links.append(set(targets) if rel.to_many else set(targets[-1:]))
        table.rows[serial] = [values, links]
        table.max_serial = max(table.max_serial, serial)
    if not r.at_end():
        raise Bad("trailing bytes")


def load_checkpoint(directory, name, expected_sequence, report):
    data = open(os.path.join(directory, name), "rb").read()
    header = read_header(data, CHECKPOINT_MAGIC, name)
    if header.sequence != expected_sequence:
        raise Damage("header", name, 24, f"holds sequence {header.sequence} but is named for {expected_sequence}")
    schema = header.schema
    graph = Graph(schema)
    known = {1: {T_ROWS, T_FOOTER}, 2: {T_COLUMNS, T_FOOTER}}.get(header.version, {T_COLUMNS, T_INDEX_ORDER, T_FOOTER})
    offset = header.length
    expected_chunk = 1
    current_entity = -1
    last_serial = 0
    count = 0
    orders = {}
    order_chunks = []
    while True:
        step = scan_record(data, offset, header.salt, [], known, name, frame_header_size(header.version),
                           header.version)
        if step[0] == "end":
            raise Damage("length", name, offset, "the checkpoint ends before its footer")
        if step[0] == "damage":
            raise Damage(step[1], name, offset, step[2])
        f = step[1]
        if f.type & IGNORABLE:
            # § Ignorable types: checked, then skipped; no chunk number, never loaded as data.
            offset += f.size
            continue
        if f.sequence != expected_chunk:
            raise Damage("sequence gap", name, offset, f"chunk {f.sequence} where {expected_chunk} was due")
        if f.type not in known:
            raise Damage("unknown type", name, offset, f"frame type {f.type} in a checkpoint")
        expected_chunk += 1
        payload = frame_payload(f, name)
        try:
            if f.type == T_FOOTER:
                r = R(payload)
                if r.varint() != header.sequence:
                    raise Bad("footer sequence differs from the header's")
                n = r.count(2)
                if n != len(schema.entities):
                    raise Bad(f"footer lists {n} entities")
                for e in range(n):
                    max_serial, objects = r.varint(), r.varint()
                    table = graph.tables[e]
                    if objects != len(table.rows) or max_serial < table.max_serial:
                        raise Bad(f"entity {e} should hold {objects} objects up to serial {max_serial}")
                    table.max_serial = max_serial
                chunks = r.varint()
                if chunks != f.sequence - 1 or not r.at_end():
                    raise Bad(f"footer chunk count {chunks} is wrong (the footer is chunk {f.sequence})")
                if offset + f.size != len(data):
                    raise Bad("bytes follow the footer")
                break
            if f.type == T_ROWS:
                decode_rows_chunk(payload, schema, graph)
            elif f.type == T_COLUMNS:
                entity, serials, columns, links = decode_columns_chunk(payload, schema)
                if entity != current_entity:
                    if entity < current_entity:
                        raise Bad(f"entity {entity} comes after entity {current_entity}")
                    current_entity, last_serial, count, orders = entity, 0, 0, {}
                if orders:
                    raise Bad(f"rows of entity {entity} after the order of its indexes")
                if serials[0] <= last_serial:
                    raise Bad(f"serial {serials[0]} is not above {last_serial}")
                table = graph.tables[entity]
                for i, serial in enumerate(serials):
                    table.rows[serial] = [[col[i] for col in columns], [rows[i] for rows in links]]
                table.max_serial = serials[-1]
                last_serial = serials[-1]
                count += len(serials)
            elif f.type == T_INDEX_ORDER:
                r = R(payload)
                entity = r.number(len(schema.entities) - 1)
                indexes = schema.entities[entity].indexes
                if not indexes:
                    raise Bad("an index order for an entity with no index")
                i = r.number(len(indexes) - 1)
                if entity != current_entity or count == 0:
                    raise Bad(f"an index order for entity {entity} after entity {current_entity}")
                if i in orders:
                    raise Bad(f"a second order for index {i}")
                if any(schema.entities[entity].attributes[c].kind == K_LIST for c in indexes[i][0]):
                    raise Bad("an index order for an index of collection elements, which has none")
                n = r.varint()
                if n != count:
                    raise Bad(f"an index order of {n} places for {count} objects")
                s = section(r)
                places = ints_block(s, n)
                expect_end(s)
                if not r.at_end():
                    raise Bad("trailing bytes")
                if any(p < 0 or p >= n for p in places):
                    raise Bad("a place out of range")
                orders[i] = places
                order_chunks.append((entity, i, places))
        except Bad as e:
            raise Damage("decode", name, offset, str(e))
        offset += f.size
    graph.sequence = header.sequence
    for entity, i, places in order_chunks:
        report.index_orders += 1
        if not order_matches(graph, entity, i, places):
            report.notes.append(f"{name}: the stored order of index {i} of {schema.entities[entity].name} is not "
                                f"the order journal-format.md defines")
    return graph, header


# ---------------------------------------------------------------------------------------------------------------
# Index order (§ Index order): used to check index-order chunks against the document's definition

TYPE_RANK = {"null": 0, "bool": 1, "int": 2, "double": 2, "decimal": 2, "string": 3, "date": 4, "data": 5,
             "uuid": 6, "url": 7, "list": 8}


def double_key(x):
    # -0.0 equals 0.0; every NaN equals every other NaN and sorts after +infinity.
    return (1, 0.0) if math.isnan(x) else (0, x + 0.0)


def string_key(s):
    # Canonical equivalence: NFC, then Unicode scalar order.
    return unicodedata.normalize("NFC", s)


def value_key(v):
    tag, p = v
    rank = TYPE_RANK[tag]
    if tag == "null":
        return (rank,)
    if tag == "bool":
        return (rank, int(p))
    if tag == "int":
        return (rank, (0, p))
    if tag == "double":
        return (rank, double_key(f64(p)))
    if tag == "decimal":
        return (rank, (1, 0.0) if p == "NaN" else (0, float(p)))
    if tag == "string":
        return (rank, string_key(p))
    if tag == "date":
        return (rank, double_key(f64(p)))
    if tag == "data":
        return (rank, p)
    if tag == "uuid":
        return (rank, p)
    if tag == "list":
        return (rank, tuple(value_key(e) for e in p))
    return (rank, string_key(p))


def order_matches(graph, entity, i, places):
    positions, unique, names = graph.schema.entities[entity].indexes[i]
    rows = graph.tables[entity].rows
    serials = sorted(rows)
    keyed = sorted(serials, key=lambda s: (tuple(value_key(rows[s][0][c]) for c in positions), s))
    rank = {s: k for k, s in enumerate(keyed)}
    return all(places[k] == rank[s] for k, s in enumerate(serials))


# ---------------------------------------------------------------------------------------------------------------
# The store: manifest, checkpoint, segments (§ Recovery)

class Report:
    def __init__(self):
        self.problems = []  # Damage
        self.notes = []
        self.index_orders = 0
        self.records = []  # (record dict) for dump


def list_store(directory):
    segments, checkpoints = {}, {}
    for name in os.listdir(directory):
        if name.endswith(".tmp"):
            continue
        for prefix, suffix, into in (("segment-", ".trj", segments), ("checkpoint-", ".trc", checkpoints)):
            if name.startswith(prefix) and name.endswith(suffix) and len(name) == len(prefix) + 16 + len(suffix):
                digits = name[len(prefix):len(prefix) + 16]
                if all(ch in "0123456789abcdef" for ch in digits):
                    into[int(digits, 16)] = name
    return segments, checkpoints


def read_store(directory, check_history=False):
    """Rebuilds the store: returns (graph, report). Damage is collected in report.problems. With check_history
    (verify), history that contradicts the state it applies to is damage too."""
    report = Report()
    manifest = read_manifest(os.path.join(directory, "MANIFEST"))
    segments, checkpoints = list_store(directory)
    graph = None
    if manifest["checkpoint"] > 0:
        name = f"checkpoint-{manifest['checkpoint']:016x}.trc"
        if manifest["checkpoint"] not in checkpoints:
            raise Damage("missing file", name, 0, "the manifest names it")
        graph, _ = load_checkpoint(directory, name, manifest["checkpoint"], report)
    # Headers of segments F…L first (every salt is needed to tell a stale frame from damage).
    headers, datas = {}, {}
    for sid in range(manifest["first"], manifest["last"] + 1):
        name = f"segment-{sid:016x}.trj"
        if sid not in segments:
            raise Damage("missing file", name, 0, "the manifest names it")
        data = open(os.path.join(directory, name), "rb").read()
        length = struct.unpack("<I", data[12:16])[0] if len(data) >= 16 else 0
        if not (64 <= length <= len(data)):
            raise Damage("header", name, 0, "not a segment, or its header is truncated")
        headers[sid] = read_header(data[:length], SEGMENT_MAGIC, name)
        datas[sid] = data
    if graph is None:
        graph = Graph(headers[manifest["first"]].schema)
    salts = [h.salt for h in headers.values()]
    expected = manifest["checkpoint"] + 1
    for sid in range(manifest["first"], manifest["last"] + 1):
        name = f"segment-{sid:016x}.trj"
        h, data = headers[sid], datas[sid]
        is_last = sid == manifest["last"]
        if h.sequence != expected:
            raise Damage("sequence gap", name, 24, f"starts at {h.sequence}; the journal before it ends at "
                                                   f"{expected - 1}")
        offset = h.length
        fh = frame_header_size(h.version)
        while True:
            step = scan_record(data, offset, h.salt, salts, {T_CHANGE_SET, T_MIGRATION}, name, fh, h.version)
            if step[0] == "end":
                break
            if step[0] == "damage":
                kind, message = step[1], step[2]
                if kind == "zeroed" and not any(data[offset:]):
                    break  # reserved space: this segment ends here
                resume = next_valid_frame(data, offset, h.salt, {T_CHANGE_SET, T_MIGRATION}, name, fh, h.version)
                if resume is not None and is_last and not report.problems and h.version >= 6 and \
                        kind in ("checksum", "length", "zeroed") and expected > manifest["durable"]:
                    hole = judge_hole(data, resume, expected, h.salt, name, fh, h.version)
                    if hole[0] == "unacknowledged":
                        records, highest = hole[1], hole[2]
                        report.problems.append(Damage(
                            "unacknowledged hole", name, offset,
                            f"{message}, and {records} valid record{'' if records == 1 else 's'} after it, all written "
                            f"before record {expected} was durable (their watermarks: "
                            f"{'none' if highest is None else f'at most {highest}'}): nothing from here to the end "
                            f"({len(data) - offset} bytes) was acknowledged"))
                        break
                    if hole[0] == "acknowledged":
                        message += (f"; record {hole[1]} at offset {hole[2]} was written when record {hole[3]} was "
                                    f"durable (its watermark), so record {expected}, lost here, had been acknowledged")
                if resume is None and is_last and kind in ("checksum", "length") and is_rot(data, step[3], h.salt, fh):
                    raise Damage("rot", name, offset, f"{message}: a whole record with no sign of a torn write")
                if resume is None and is_last:
                    report.problems.append(Damage("torn tail", name, offset, f"{message}; nothing valid follows "
                                                                             f"({len(data) - offset} bytes to the end)"))
                    break
                raise Damage(kind, name, offset, message)
            f = step[1]
            if f.type & IGNORABLE:  # carries no commit, takes no sequence number
                offset += f.size
                continue
            if f.sequence != expected:
                raise Damage("sequence gap", name, offset, f"record {f.sequence} where {expected} was due")
            payload = frame_payload(f, name)
            try:
                if f.type == T_MIGRATION:
                    base = graph.schema
                    rec = decode_migration(payload, base)
                    if rec["from"] != base.fingerprint or rec["to"] != h.schema.fingerprint or \
                            rec["stages"][-1]["schema"].fingerprint != h.schema.fingerprint:
                        raise Damage("schema", name, offset, "a migration that does not lead from the schema in "
                                                             "effect to its segment's")
                    report.records.append(dict(frame=f, file=name, schema=h.schema, migration=rec, changes=None))
                    graph = apply_migration(graph, rec, f.sequence)
                else:
                    if h.schema.fingerprint != graph.schema.fingerprint:
                        raise Damage("schema", name, 40, "written with a schema no migration leads to")
                    cs = decode_change_set(payload, h.schema, h.version)
                    report.records.append(dict(frame=f, file=name, schema=h.schema, migration=None, changes=cs))
                    apply_change_set(graph, cs, f.sequence, check_history)
            except HistoryBad as e:
                raise Damage("history", name, offset, str(e))
            except Bad as e:
                raise Damage("decode", name, offset, str(e))
            expected = f.sequence + 1
            offset += f.size
        if is_last and expected - 1 < manifest["durable"]:
            raise Damage("vanished tail", name, offset, f"the journal ends after record {expected - 1}; the manifest "
                                                        f"says records through {manifest['durable']} were durable")
    last = headers[manifest["last"]].schema
    if last.fingerprint != graph.schema.fingerprint:
        raise Damage("schema", f"segment-{manifest['last']:016x}.trj", 40,
                     "the last segment's schema is not the one the records lead to")
    # The manifest's fingerprint field is informative only (§ Manifest): never compared.
    return graph, report


# ---------------------------------------------------------------------------------------------------------------
# Output, as the `trellis` tool prints it

def json_quote(s):
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif o < 0x20:
            out.append("\\u" + format(o, "x").rjust(4, "0"))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def swift_double(x):
    """Swift's `String(Double)`: the shortest digits that round-trip (as Python's repr), laid out as Python does
    except that Swift writes 2^53 < |x| < 1e16 in exponential form ("9.007199254740994e+15"); None for NaN and
    infinities (the tool writes null)."""
    if math.isnan(x) or math.isinf(x):
        return None
    text = repr(x)
    if 2.0 ** 53 < abs(x) < 1e16:
        sign = "-" if x < 0 else ""
        digits = text.lstrip("-").split(".")[0]  # repr writes these as 16 integer digits and ".0"
        digits = digits.rstrip("0")
        rest = digits[1:]
        return f"{sign}{digits[0]}{'.' + rest if rest else ''}e+15"
    return text


def timestamp_from_micros(micros):
    seconds = micros // 1_000_000
    fraction = micros - seconds * 1_000_000
    days, rest = divmod(seconds, 86400)
    y, m, d = civil_from_days(days)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ" % (y, m, d, rest // 3600, rest // 60 % 60, rest % 60, fraction)


def civil_from_days(z):
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + 1 if m <= 2 else y), m, d


def round_half_away(x):
    f = math.floor(x)
    diff = x - f
    if diff > 0.5 or (diff == 0.5 and x > 0):
        return f + 1
    return f


def date_text(seconds_since_2001):
    micros = round_half_away((seconds_since_2001 + SECONDS_1970_TO_2001) * 1_000_000)
    return timestamp_from_micros(int(micros))


def record_time_text(micros):
    # A frame's time (microseconds since 1970) as a Date, then as text: the tool's round trip.
    since_2001 = (micros / 1_000_000) - SECONDS_1970_TO_2001
    return date_text(since_2001)


def uuid_text(b):
    h = b.hex().upper()
    return f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def value_json(v):
    tag, p = v
    if tag == "null":
        return "null"
    if tag == "bool":
        return "true" if p else "false"
    if tag == "int":
        return str(p)
    if tag == "double":
        text = swift_double(f64(p))
        return "null" if text is None else text
    if tag == "string":
        return json_quote(p)
    if tag == "date":
        return json_quote(date_text(f64(p)))
    if tag == "data":
        return json_quote(base64.b64encode(p).decode("ascii"))
    if tag == "uuid":
        return json_quote(uuid_text(p))
    if tag == "list":
        return arr([value_json(e) for e in p])
    return json_quote(p)  # url, decimal: their text


def obj(pairs):
    return "{" + ",".join(json_quote(k) + ":" + v for k, v in pairs) + "}"


def arr(items):
    return "[" + ",".join(items) + "]"


def values_json(entity, values):
    attributes = entity.attributes
    return obj([(attributes[i].name if i < len(attributes) else f"attribute{i}", value_json(v))
                for i, v in enumerate(values)])


def export_text(store_path, graph):
    schema = graph.schema
    out = ["{\n  \"store\": " + json_quote(store_path) + ",\n  \"sequence\": " + str(graph.sequence)
           + ",\n  \"schemaFingerprint\": \"" + hex16(schema.fingerprint) + "\",\n  \"entities\": {\n"]
    # A retired entity (a placeholder a migration left so the numbers after it stay) is no entity: not exported.
    shown = [n for n, e in enumerate(schema.entities) if not e.retired]
    for position, e_number in enumerate(shown):
        e = schema.entities[e_number]
        out.append("    " + json_quote(e.name) + ": [")
        first = True
        table = graph.tables[e_number]
        for serial in sorted(table.rows):
            values, links = table.rows[serial]
            rels = []
            for k, rel in enumerate(e.relationships):
                target = schema.entities[rel.target].name
                in_order = links[k] if rel.ordered else sorted(links[k])
                rels.append((rel.name, arr(json_quote(f"{target}#{t}") for t in in_order)))
            item = obj([("id", json_quote(f"{e.name}#{serial}")), ("values", values_json(e, values)),
                        ("relationships", obj(rels))])
            out.append(("\n      " if first else ",\n      ") + item)
            first = False
        out.append(("" if first else "\n    ") + "]" + ("," if position + 1 < len(shown) else "") + "\n")
    out.append("  }\n}\n")
    return "".join(out)


def dump_text(store_path, report):
    out = ["{\n  \"store\": " + json_quote(store_path) + ",\n  \"records\": [\n"]
    for i, rec in enumerate(report.records):
        f, schema = rec["frame"], rec["schema"]
        cs = rec["changes"] or {"inserts": [], "updates": [], "edits": [], "deletes": []}

        def name(entity, serial):
            return json_quote(schema.describe(entity, serial))

        def entity_of(n):
            return schema.entities[n] if n < len(schema.entities) else Entity(f"entity{n}", False)

        inserts = [obj([("object", name(e, s)), ("values", values_json(entity_of(e), vs))])
                   for e, s, vs in cs["inserts"]]
        updates = []
        for e, s, changes in cs["updates"]:
            attrs = entity_of(e).attributes
            updates.append(obj([("object", name(e, s)), ("changes", arr(
                obj([("attribute", json_quote(attrs[a].name if a < len(attrs) else f"attribute{a}")),
                     ("old", value_json(old)), ("new", value_json(new))]) for a, old, new in changes))]))
        links = []
        for kind, se, ss, k, te, ts, position, previous in cs["edits"]:
            rels = entity_of(se).relationships
            pairs = [("kind", json_quote({1: "link", 2: "unlink", 3: "place"}[kind])), ("source", name(se, ss)),
                     ("relationship", json_quote(rels[k].name if k < len(rels) else f"relationship{k}")),
                     ("target", name(te, ts))]
            if kind == 3:
                pairs += [("position", str(position)), ("previousPosition", "null" if previous is None else str(previous))]
            links.append(obj(pairs))
        deletes = []
        for e, s, vs, targets in cs["deletes"]:
            rels = entity_of(e).relationships
            deletes.append(obj([("object", name(e, s)), ("values", values_json(entity_of(e), vs)), (
                "relationships", obj([(rels[k].name, arr(name(t_entity, t) for t in serials))
                                      for k, (t_entity, serials) in enumerate(targets) if serials]))]))
        migration = "null"
        m = rec["migration"]
        if m is not None:
            first_stage, last_stage = m["stages"][0], m["stages"][-1]
            migration = obj([("sequence", str(f.sequence)), ("time", json_quote(record_time_text(f.time))),
                             ("fromFingerprint", json_quote(hex16(m["from"]))),
                             ("toFingerprint", json_quote(hex16(m["to"]))),
                             ("fromVersion", json_quote(first_stage["from_version"])
                              if first_stage["from_version"] is not None else "null"),
                             ("toVersion", json_quote(last_stage["to_version"])
                              if last_stage["to_version"] is not None else "null"),
                             ("steps", arr(json_quote(s) for s in m["steps"]))])
        author = cs.get("author")
        item = obj([("sequence", str(f.sequence)), ("time", json_quote(record_time_text(f.time))),
                    ("author", json_quote(author) if author is not None else "null"),
                    ("file", json_quote(rec["file"])), ("offset", str(f.offset)),
                    ("storedBytes", str(len(f.stored))), ("uncompressedBytes", str(f.raw_len)),
                    ("compressed", "true" if f.codec == 1 else "false"), ("inserts", arr(inserts)),
                    ("updates", arr(updates)), ("links", arr(links)), ("deletes", arr(deletes)),
                    ("migration", migration)])
        out.append(("    " if i == 0 else ",\n    ") + item)
    problems = arr(obj([("class", json_quote(p.kind)), ("file", json_quote(p.file)), ("offset", str(p.offset)),
                        ("message", json_quote(p.message))]) for p in report.problems)
    out.append(("\n" if report.records else "") + "  ],\n  \"problems\": " + problems + "\n}\n")
    return "".join(out)


def store_path_text(path):
    # As the tool prints it: absolute, without a trailing slash.
    if not os.path.isabs(path):
        path = os.path.join(os.getcwd(), path)
    while len(path) > 1 and path.endswith("/"):
        path = path[:-1]
    return path


def main(argv):
    if len(argv) != 3 or argv[1] not in ("export", "dump", "verify"):
        sys.stderr.write(__doc__)
        return 2
    command, store = argv[1], argv[2]
    try:
        graph, report = read_store(store, check_history=command == "verify")
    except Damage as d:
        sys.stderr.write(f"damage: {d}\n")
        return 1
    text = store_path_text(store)
    if command == "export":
        sys.stdout.write(export_text(text, graph))
    elif command == "dump":
        sys.stdout.write(dump_text(text, report))
    else:
        counts = ", ".join(f"{e.name} {len(graph.tables[i].rows)}" for i, e in enumerate(graph.schema.entities))
        print(f"sequence {graph.sequence}; records {len(report.records)}; index orders checked "
              f"{report.index_orders}; objects: {counts}")
    for note in report.notes:
        sys.stderr.write(f"note: {note}\n")
    for p in report.problems:
        sys.stderr.write(f"damage: {p}\n")
    return 1 if report.problems or report.notes else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

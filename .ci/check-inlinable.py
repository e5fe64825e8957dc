#!/usr/bin/env python3
"""Fails when a `package` type has `@inlinable` members but is not itself `@usableFromInline`.

Such members are never inlined into another module: the compiler serializes their bodies only when the type is
usable from inlinable code, and says nothing otherwise (checked with `-emit-sil` on this toolchain: a call to an
`@inlinable @inline(__always)` method of a plain `package struct` stays a call). Marking the type makes the compiler
check every body and inline it across the layers, as the attribute promises. Types are found by their declaration
line; members in extensions count for the type they extend, wherever the extension is; a nested type is named by its
path.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DECL = re.compile(r"^\s*((?:@\w+\s+)*)(?:package|public|internal|private|fileprivate)?\s*(?:final\s+)?"
                  r"(?:struct|class|enum)\s+(\w+)")
EXT = re.compile(r"^\s*extension\s+(\w+)")


def main() -> int:
    declared: dict[str, tuple[str, bool]] = {}  # name -> (where, marked); only package types
    inlinable_in: dict[str, str] = {}  # type name -> first place an @inlinable member of it is
    for path in sorted((ROOT / "Sources").rglob("*.swift")):
        stack: list[tuple[str, int]] = []  # (type name, brace depth at which its body opened)
        depth = 0
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("//", 1)[0]
            m = DECL.match(code)
            e = EXT.match(code)
            opened = None
            if m and "{" in code:
                attrs, name = m.group(1), m.group(2)
                # Nested types are named by their path (`RowSequence.Iterator`), so that two `Iterator`s differ.
                if stack:
                    name = f"{stack[-1][0]}.{name}"
                if re.match(r"^\s*(?:@\w+\s+)*package\s", code):
                    declared[name] = (f"{path.relative_to(ROOT)}:{number}", "@usableFromInline" in attrs)
                opened = name
            elif e and "{" in code:
                opened = e.group(1)
            if "@inlinable" in code and stack:
                inlinable_in.setdefault(stack[-1][0], f"{path.relative_to(ROOT)}:{number}")
            for ch in code:
                if ch == "{":
                    depth += 1
                    if opened is not None:
                        stack.append((opened, depth))
                        opened = None
                elif ch == "}":
                    if stack and stack[-1][1] == depth:
                        stack.pop()
                    depth -= 1
    bad = [(name, where, inlinable_in[name]) for name, (where, marked) in declared.items()
           if name in inlinable_in and not marked]
    for name, where, member in sorted(bad):
        print(f"{where}: package type {name} has @inlinable members ({member}) but is not @usableFromInline")
    print(f"{len(declared)} package types, {sum(1 for n in declared if n in inlinable_in)} with @inlinable members, "
          f"{len(bad)} not usable from inlinable code")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

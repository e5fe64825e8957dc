#!/usr/bin/env python3
"""Fails when a public or open declaration of the library has no `///` comment above it.

A declaration is a line that starts with `public` or `open` after any attributes (`@inlinable public func …`);
`public import` and extensions are left out (their members are checked). Attribute lines between the comment and the
declaration are skipped. `-v` lists each undocumented declaration.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
ATTRIBUTES = r"^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*"
DECLARATION = re.compile(ATTRIBUTES + r"(?:public|open)\b")
EXEMPT = re.compile(ATTRIBUTES + r"(?:public|open)\s+(?:import|extension)\b")


def main() -> int:
    total = 0
    missing = []
    for path in sorted((ROOT / "Sources").rglob("*.swift")):
        lines = path.read_text().splitlines()
        for number, line in enumerate(lines):
            if not DECLARATION.match(line) or EXEMPT.match(line):
                continue
            total += 1
            above = number - 1
            while above >= 0 and re.match(r"^\s*@", lines[above]):
                above -= 1
            if above < 0 or not lines[above].strip().startswith("///"):
                missing.append(f"{path.relative_to(ROOT)}:{number + 1}: {line.strip()}")
    if missing and "-v" in sys.argv:
        print("\n".join(missing))
    print(f"public declarations: {total}, without a /// comment: {len(missing)}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Fails when a library target imports one above it.

The layers, lowest first, are the library targets of Package.swift; each may import only the targets before it in
LAYERS (and anything outside the package: Foundation, Synchronization, the system libraries). The umbrella `Trellis`
re-exports them all and nothing imports it. A target of Package.swift that is missing here fails the check too, so a
new target has to be given its place.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Lowest first.
LAYERS = ["TrellisCore", "TrellisGraph", "TrellisJournal", "TrellisStore", "Trellis"]

IMPORT = re.compile(r"^\s*(?:@[\w()]+\s+)*import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?(\w+)")


def library_targets() -> list[str]:
    manifest = (ROOT / "Package.swift").read_text()
    return re.findall(r'\.target\(\s*name:\s*"([^"]+)"', manifest)


def main() -> int:
    problems = []
    targets = library_targets()
    for name in targets:
        if name not in LAYERS:
            problems.append(f"Package.swift: library target {name} has no place in .ci/check-layers.py's LAYERS")
    for name in LAYERS:
        if name not in targets:
            problems.append(f".ci/check-layers.py: {name} is not a library target of Package.swift")
    rank = {name: i for i, name in enumerate(LAYERS)}
    checked = 0
    for name in LAYERS:
        for path in sorted((ROOT / "Sources" / name).rglob("*.swift")):
            checked += 1
            for number, line in enumerate(path.read_text().splitlines(), 1):
                match = IMPORT.match(line)
                if not match or match.group(1) not in rank:
                    continue
                imported = match.group(1)
                if rank[imported] >= rank[name]:
                    where = path.relative_to(ROOT)
                    problems.append(f"{where}:{number}: {name} imports {imported}, which is not below it")
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"layers: {' < '.join(LAYERS)}; {checked} files, no import upward")
    return 0


if __name__ == "__main__":
    sys.exit(main())

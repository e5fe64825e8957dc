#!/usr/bin/env python3
"""Fails when a library target imports one above it, or when anything that ships uses the test support.

The layers, lowest first, are the library targets of Package.swift; each may import only the targets before it in
LAYERS (and anything outside the package: Foundation, Synchronization, the system libraries). The umbrella `Trellis`
re-exports them all and nothing imports it. Above them sits TEST_SUPPORT (the simulated file layer): it may import any
layer, but no layer imports it, and no product's target (nor any target a product is built from) depends on it or
imports it; only the test targets, the fuzzer and `trellis-crashtest` may. Beside the chain sit SIDE_LAYERS (the NATS
client): each may import only the layers it names, and no library or executable target imports it except those it names
as its importers (test targets may). A target of Package.swift that is missing here fails the check too, so a new target
has to be given its place.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Lowest first.
LAYERS = ["TrellisCore", "TrellisGraph", "TrellisJournal", "TrellisStore", "Trellis"]
# Non-product targets above every layer.
TEST_SUPPORT = ["TrellisTestSupport"]
# Library targets beside the chain: the package targets each may import, and the only targets that may import it (the
# replication layer; the umbrella exports neither).
SIDE_LAYERS = {
    "TrellisNATS": {"imports": ["TrellisCore"], "importers": ["TrellisReplication"]},
    # Replication: above the store, beside the umbrella (which does not export it); apps and the tool import it.
    "TrellisReplication": {
        "imports": ["TrellisCore", "TrellisGraph", "TrellisJournal", "TrellisStore", "TrellisNATS"],
        # trellis-crashtest: a writer child that publishes, for the replication fault tests; trellis-bench: R1.
        "importers": ["trellis", "trellis-crashtest", "trellis-bench"],
    },
    # A nats-server child process for the NATS and replication tests and the bench's R1; nothing that ships uses it.
    "TrellisNATSServer": {"imports": ["TrellisCore"], "importers": ["trellis-bench"]},
}

IMPORT = re.compile(r"^\s*(?:@[\w()]+\s+)*import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?(\w+)")
TARGET = re.compile(r'\.(target|executableTarget|testTarget)\(\s*name:\s*"([^"]+)"(.*?)\bpath:\s*"([^"]+)"', re.S)
PRODUCT = re.compile(r'\.(?:library|executable)\(\s*name:\s*"[^"]+",\s*targets:\s*\[(.*?)\]', re.S)


def targets(manifest: str) -> dict[str, tuple[str, list[str], str]]:
    """Each target of the manifest: its kind, the names in its `dependencies:` and its path."""
    out = {}
    for kind, name, middle, path in TARGET.findall(manifest):
        deps = re.search(r"dependencies:\s*\[(.*?)\]", middle, re.S)
        out[name] = (kind, re.findall(r'"([^"]+)"', deps.group(1)) if deps else [], path)
    return out


def shipped(all_targets: dict[str, tuple[str, list[str], str]], manifest: str) -> set[str]:
    """The targets the products are built from, with everything they depend on."""
    todo = [name for match in PRODUCT.findall(manifest) for name in re.findall(r'"([^"]+)"', match)]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(all_targets.get(name, ("", [], ""))[1])
    return seen


def imports(path: pathlib.Path) -> list[tuple[int, str]]:
    out = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        match = IMPORT.match(line)
        if match:
            out.append((number, match.group(1)))
    return out


def main() -> int:
    problems = []
    manifest = (ROOT / "Package.swift").read_text()
    all_targets = targets(manifest)
    libraries = [name for name, (kind, _, _) in all_targets.items() if kind == "target"]
    for name in libraries:
        if name not in LAYERS + TEST_SUPPORT + list(SIDE_LAYERS):
            problems.append(f"Package.swift: library target {name} has no place in .ci/check-layers.py's LAYERS")
    for name in LAYERS + TEST_SUPPORT + list(SIDE_LAYERS):
        if name not in libraries:
            problems.append(f".ci/check-layers.py: {name} is not a library target of Package.swift")
    rank = {name: i for i, name in enumerate(LAYERS + TEST_SUPPORT)}
    checked = 0
    for name in LAYERS + TEST_SUPPORT:
        for path in sorted((ROOT / "Sources" / name).rglob("*.swift")):
            checked += 1
            for number, imported in imports(path):
                if imported in rank and rank[imported] >= rank[name]:
                    where = path.relative_to(ROOT)
                    problems.append(f"{where}:{number}: {name} imports {imported}, which is not below it")
    package_targets = set(all_targets)
    for side, rule in SIDE_LAYERS.items():
        for path in sorted((ROOT / "Sources" / side).rglob("*.swift")):
            checked += 1
            for number, imported in imports(path):
                if imported in package_targets and imported not in rule["imports"]:
                    where = path.relative_to(ROOT)
                    problems.append(f"{where}:{number}: {side} imports {imported}; it may import only {rule['imports']}")
        for name, (kind, dependencies, directory) in sorted(all_targets.items()):
            if kind == "testTarget" or name == side or name in rule["importers"]:
                continue
            if side in dependencies:
                problems.append(f"Package.swift: {name} depends on {side}, which only {rule['importers']} may use")
            for path in sorted((ROOT / directory).rglob("*.swift")) if directory else []:
                for number, imported in imports(path):
                    if imported == side:
                        where = path.relative_to(ROOT)
                        problems.append(f"{where}:{number}: {name} imports {side}, which only {rule['importers']} may")
    ships = shipped(all_targets, manifest)
    for name in sorted(ships):
        if name in TEST_SUPPORT:
            problems.append(f"Package.swift: {name} is test support, but a product is built from it")
            continue
        _, dependencies, directory = all_targets.get(name, ("", [], ""))
        for support in TEST_SUPPORT:
            if support in dependencies:
                problems.append(f"Package.swift: {name} ships in a product and depends on {support}")
        for path in sorted((ROOT / directory).rglob("*.swift")) if directory else []:
            for number, imported in imports(path):
                if imported in TEST_SUPPORT:
                    where = path.relative_to(ROOT)
                    problems.append(f"{where}:{number}: {name} ships in a product and imports {imported}")
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(
        f"layers: {' < '.join(LAYERS)} < test support ({', '.join(TEST_SUPPORT)}); beside them "
        f"{', '.join(SIDE_LAYERS)}; {checked} files, no import "
        f"upward; nothing of the {len(ships)} shipped targets uses the test support")
    return 0


if __name__ == "__main__":
    sys.exit(main())

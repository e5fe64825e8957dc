#!/usr/bin/env python3
"""Checks that every Swift example of the documentation is compiled by a test.

Every ```swift block of README.md and of the DocC catalog (Sources/Trellis/Trellis.docc/*.md) must appear in some
file under Tests/ as a contiguous run of its non-blank lines, each line compared with leading and trailing whitespace
stripped: a test may indent the block inside a function, a type or an `enum` namespace, declare what the example
takes for granted (`url`, `deadline`, a store) before it, and check what it claims after it.

Two allowances:
- A block's leading `import` lines (`import Trellis`) are matched by the same lines anywhere in the test file that
  holds the rest of the block, since an import can only stand at the top of a file.
- A block may be exempted by a marker line right before its fence (blank lines between are allowed), with a reason:
      <!-- not compiled: an app's @main, which a test target cannot hold -->
  Markdown renderers and DocC show nothing for it. Keep exemptions rare.

Usage: python3 .ci/check-doc-examples.py [-v]   (-v lists where each block was found)
Exits 1 when a block is found nowhere, printing its file:line and the closest test file.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OPEN = re.compile(r"^\s*```swift\s*$")
CLOSE = re.compile(r"^\s*```\s*$")
EXEMPT = re.compile(r"^\s*<!--\s*not compiled:\s*(\S.*?)\s*-->\s*$")
IMPORT = re.compile(r"^(@testable\s+)?import\s+\w+$")


def normalized(lines):
    """The non-blank lines, stripped, each with its 1-based line number."""
    return [(n, line.strip()) for n, line in enumerate(lines, 1) if line.strip()]


def blocks(path):
    """Yields (line of the fence, the block's lines, the exemption reason or None) for each ```swift block."""
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        if not OPEN.match(lines[i]):
            i += 1
            continue
        start = i
        j = i + 1
        while j < len(lines) and not CLOSE.match(lines[j]):
            j += 1
        if j == len(lines):
            sys.exit(f"{path.relative_to(ROOT)}:{start + 1}: a ```swift block that is never closed")
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        marker = EXEMPT.match(lines[k]) if k >= 0 else None
        yield start + 1, lines[start + 1 : j], marker.group(1) if marker else None
        i = j + 1


def find(block, tests):
    """Where the block is in the tests: (file, line) or None, and the closest miss for the hint."""
    imports = []
    body = [line for _, line in normalized(block)]
    while body and IMPORT.match(body[0]):
        imports.append(body.pop(0))
    best = (0, None, None)  # lines matched, file, line number where the partial match starts
    if not body:
        return None, best
    for path, lines in tests:
        texts = [t for _, t in lines]
        if any(i not in texts for i in imports):
            continue
        for s, text in enumerate(texts):
            if text != body[0]:
                continue
            k = 1
            while k < len(body) and s + k < len(texts) and texts[s + k] == body[k]:
                k += 1
            if k == len(body):
                return (path, lines[s][0]), best
            if k > best[0]:
                best = (k, path, (lines[s][0], lines[s + k] if s + k < len(lines) else None))
    return None, best


def main():
    verbose = "-v" in sys.argv[1:]
    docs = [ROOT / "README.md"] + sorted((ROOT / "Sources/Trellis/Trellis.docc").glob("*.md"))
    tests = [(p, normalized(p.read_text().splitlines())) for p in sorted((ROOT / "Tests").rglob("*.swift"))]
    total = exempt = 0
    missing = []
    for doc in docs:
        name = doc.relative_to(ROOT)
        for line, block, reason in blocks(doc):
            total += 1
            if reason:
                exempt += 1
                if verbose:
                    print(f"{name}:{line}: exempt ({reason})")
                continue
            where, (matched, path, at) = find(block, tests)
            if where:
                if verbose:
                    print(f"{name}:{line}: in {where[0].relative_to(ROOT)}:{where[1]}")
                continue
            body = [t for _, t in normalized(block) if not IMPORT.match(t)]
            text = f"{name}:{line}: this block is in no test ({body[0][:70] if body else 'empty'}…)"
            if path:
                test = f"{at[1][1]}   (line {at[1][0]})" if at[1] else "(the end of the file)"
                text += (
                    f"\n    closest: {path.relative_to(ROOT)}:{at[0]} matches its first {matched} of {len(body)}"
                    f" lines, then\n        block: {body[matched]}\n        test:  {test}"
                )
            missing.append(text)
    for text in missing:
        print(text)
    print(
        f"doc examples: {total - exempt - len(missing)} of {total} blocks compiled by tests, {exempt} exempt, "
        f"{len(missing)} missing"
    )
    if missing:
        print(
            "hint: copy each block verbatim (its lines in order; indentation is free) into a test under "
            "Tests/TrellisTests/Docs/ that runs it and checks what it claims; or, for a block that cannot compile "
            "on purpose, put <!-- not compiled: REASON --> on the line before its fence"
        )
        sys.exit(1)


if __name__ == "__main__":
    main()

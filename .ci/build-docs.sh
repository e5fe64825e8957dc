#!/usr/bin/env bash
# Builds the DocC documentation of the umbrella module `Trellis` (Sources/Trellis/Trellis.docc) into a temporary
# directory, fails on any DocC warning, and checks that the landing page's topics list every article of the catalog.
#
# Symbol graphs: the types live in the layer modules and `Trellis` re-exports them (`@_exported import`). DocC takes
# one module per catalog, so the umbrella's graph is extracted from the built modules with the layers allowed as
# re-exported modules: every public symbol then belongs to `Trellis` (`Trellis.symbols.json`, and
# `Trellis@Swift`/`Trellis@FoundationEssentials` for extensions of standard types). Extracting reads the modules of a
# build (`swift build`, or the release test build `.ci/run` has done before), so it takes seconds and changes no
# build flags.
# Usage: .ci/build-docs.sh [OUTPUT-DIR]   (the archive is kept there; by default a temporary directory is removed)
set -euo pipefail
cd "$(dirname "$0")/.."

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
out="${1:-$work/Trellis.doccarchive}"

# TRELLIS_DOCS_CONFIGURATION=release reads the modules of a release build instead (what `.ci/run` builds).
configuration="${TRELLIS_DOCS_CONFIGURATION:-debug}"
bin="$(swift build -c "$configuration" --show-bin-path)"
if [ ! -f "$bin/Modules/TrellisStore.swiftmodule" ] && [ ! -f "$bin/TrellisStore.swiftmodule" ]; then
    swift build -c "$configuration" --target Trellis
fi
modules="$bin/Modules"
[ -d "$modules" ] || modules="$bin"
triple="$(swift -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])')"

mkdir -p "$work/symbol-graphs"
swift symbolgraph-extract -module-name Trellis -target "$triple" -I "$modules" -I Sources/CZlib -I Sources/CThreadSanitizer -I Sources/CTrellisHints \
    -minimum-access-level public \
    -experimental-allowed-reexported-modules=TrellisCore,TrellisGraph,TrellisJournal,TrellisStore \
    -output-dir "$work/symbol-graphs"

docc="$(command -v docc || echo "$(dirname "$(readlink -f "$(command -v swift)")")/docc")"
rm -rf "$out"
"$docc" convert Sources/Trellis/Trellis.docc --additional-symbol-graph-dir "$work/symbol-graphs" \
    --output-path "$out" --fallback-display-name Trellis --fallback-bundle-identifier org.trellis.Trellis \
    --warnings-as-errors 2>&1 | tee "$work/docc.log"
if grep -qE "^(warning|error):" "$work/docc.log"; then
    echo "docc reported problems"
    exit 1
fi

python3 - "$out" Sources/Trellis/Trellis.docc <<'PY'
import json, pathlib, sys

archive, catalog = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
landing = json.loads((archive / "data/documentation/trellis.json").read_text())
listed = {i.rsplit("/", 1)[-1] for section in landing.get("topicSections", []) for i in section["identifiers"]}
articles = sorted(p.stem for p in catalog.glob("*.md") if p.stem != "Trellis")
missing = [a for a in articles if a not in listed]
if missing:
    print("the landing page's topics do not list:", ", ".join(missing))
    sys.exit(1)
for a in articles:
    if not (archive / f"data/documentation/trellis/{a.lower()}.json").exists():
        print(f"no page was generated for the article {a}")
        sys.exit(1)
print(f"docs: {len(articles)} articles, all listed on the landing page; {len(listed)} topics in all")
PY

#!/usr/bin/env bash
# The README's "A first GEMM" examples, exactly as written there.
#   scripts/readme_examples.sh build   (any machine with the toolkit; builds into build-readme/):
#       installs the package from $TILECAST_BUILD_DIR into build-readme/prefix, builds
#       examples/cpp against it with the README's commands, builds the README's C++ snippet
#       (copied from README.md) the same way, and copies the README's Python snippet out.
#   scripts/readme_examples.sh run     (the GPU machine; carry build-readme; the Python snippet
#       needs the package from scripts/device_python.sh in build-python/site): runs all three.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build-readme
# The first fenced block of `lang` after the "## A first GEMM" heading.
snippet() { awk -v lang="$1" '/^## A first GEMM/{s=1} s&&$0=="```"lang{f=1;next} f&&/^```/{exit} f' README.md; }
case "${1:-}" in
  build)
    source scripts/env.sh
    rm -rf "$out" && mkdir -p "$out/snippet"
    cmake --install "$TILECAST_BUILD_DIR" --prefix "$PWD/$out/prefix" >/dev/null
    cmake -S examples/cpp -B "$out/example" -DCMAKE_PREFIX_PATH="$PWD/$out/prefix" >/dev/null
    cmake --build "$out/example" >/dev/null
    snippet cpp >"$out/snippet/main.cpp"
    cp examples/cpp/CMakeLists.txt "$out/snippet/"
    cmake -S "$out/snippet" -B "$out/snippet/build" -DCMAKE_PREFIX_PATH="$PWD/$out/prefix" >/dev/null
    cmake --build "$out/snippet/build" >/dev/null
    snippet python >"$out/readme.py"
    wc -l "$out/snippet/main.cpp" "$out/readme.py"
    ;;
  run)
    echo "== examples/cpp (tilecast-example)"; "$out/example/tilecast-example"
    echo "== README C++ snippet"; "$out/snippet/build/tilecast-example"
    echo "== README Python snippet"; PYTHONPATH="$PWD/build-python/site" python3 "$out/readme.py"
    ;;
  *) echo "usage: $0 build|run" >&2; exit 2 ;;
esac

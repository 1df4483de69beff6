#!/usr/bin/env bash
# Builds and runs tilecast-bench on its default suite (arguments are passed on). Without a GPU it
# prints each problem's plan and traffic model and says that no GPU was found. Needs only the CUDA
# toolkit and CMake (no GoogleTest, no network).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
source scripts/env.sh
cmake -S . -B "$TILECAST_BUILD_DIR" "${TILECAST_GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$TILECAST_BUILD_DIR" --target tilecast-bench
"$TILECAST_BUILD_DIR/tools/bench/tilecast-bench" "$@"

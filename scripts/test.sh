#!/usr/bin/env bash
# Builds everything and runs every test. Without a GPU the `gpu` tests report skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
source scripts/env.sh
cmake -S . -B "$TILECAST_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$TILECAST_BUILD_DIR"
ctest --test-dir "$TILECAST_BUILD_DIR" --output-on-failure "$@"

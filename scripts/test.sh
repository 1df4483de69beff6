#!/usr/bin/env bash
# Builds everything and runs every test. Without a GPU the `gpu` tests report skipped. Installs
# what only the tests need (GoogleTest, spin) where missing: scripts/setup.sh --tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
source scripts/env.sh
cmake -S . -B "$TILECAST_BUILD_DIR" "${TILECAST_GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release -DTILECAST_BUILD_TESTS=ON >/dev/null
cmake --build "$TILECAST_BUILD_DIR"
ctest --test-dir "$TILECAST_BUILD_DIR" --output-on-failure "$@"

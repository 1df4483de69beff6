#!/usr/bin/env bash
# Checks (and on Debian installs) what the build needs: the CUDA 13 toolkit (nvcc, NVRTC, CCCL,
# cuBLAS, NCCL; assumed, never installed) and CMake. Ninja is optional: scripts/env.sh falls back
# to CMake's default generator without it. With --tests it also installs what only the tests need:
# GoogleTest (unless its sources are carried in .deps/googletest) and the spin model checker.
# Does nothing, and needs no network, where everything is present.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] ||
  { echo "setup: the CUDA 13 toolkit is required (nvcc not found)" >&2; exit 1; }
need=()
command -v cmake >/dev/null || need+=(cmake)
if [ "${1:-}" = --tests ]; then
  command -v spin >/dev/null || need+=(spin)
  [ -f /usr/include/gtest/gtest.h ] || [ -f .deps/googletest/CMakeLists.txt ] || need+=(libgtest-dev)
fi
if [ ${#need[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || { echo "setup: missing ${need[*]} (no apt-get here to install them)" >&2; exit 1; }
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "setup: installing ${need[*]}" >&2
  $sudo apt-get update -qq && $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

#!/usr/bin/env bash
# Installs what the build and the tests need on a fresh Debian machine (CI's too): CMake, Ninja,
# GoogleTest and the spin model checker. The CUDA 13 toolkit is assumed (nvcc, NVRTC, CCCL,
# cuBLAS, NCCL). Does nothing where everything is present.
set -euo pipefail
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v spin >/dev/null || need+=(spin)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq && $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || { echo "setup: the CUDA 13 toolkit is required (nvcc not found)" >&2; exit 1; }

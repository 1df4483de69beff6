#!/usr/bin/env bash
# The SASS of the kernels tilecast would run for a problem, on a machine without a GPU:
# tilecast-warm compiles them (NVRTC; TILECAST_JIT_DEBUG=2 keeps each cubin), cuobjdump
# disassembles them into $OUT/<kernel>.sass, and scripts/sass_summary.py prints what a kernel
# change shows first: local memory, the wgmma and TMA instructions, and the consumers' k-loop
# (instructions between one stage's wait and the next).
#
#   scripts/sass.sh --shape M,N,K[,B] [--config k=v,...] [--out fp32] [--with-c] [--suite s]
#   (any tilecast-warm arguments; OUT defaults to .session/sass)
#
# The toolkit here ships neither cuobjdump nor the nvdisasm it calls; PyPI's nvidia-cuda-cuobjdump
# and nvidia-cuda-nvdisasm wheels have them (NVIDIA's own; a release newer than nvcc 13.0 reads
# sm_90a cubins). They are unpacked once into .deps/cuda-binutils (ignored): the network is needed
# the first time only.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/.session/sass}"
tools=.deps/cuda-binutils
bin=$tools/nvidia/cu13/bin
if [ ! -x "$bin/cuobjdump" ] || [ ! -x "$bin/nvdisasm" ]; then
  echo "sass: fetching nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm from PyPI into $tools" >&2
  wheels=$(mktemp -d)
  trap 'rm -rf "$wheels"' EXIT
  python3 -m pip download -q --no-deps -d "$wheels" 'nvidia-cuda-cuobjdump>=13,<14' 'nvidia-cuda-nvdisasm>=13,<14'
  mkdir -p "$tools"
  for w in "$wheels"/*.whl; do python3 -m zipfile -e "$w" "$tools"; done
  chmod +x "$bin/cuobjdump" "$bin/nvdisasm"
fi
warm=${TILECAST_BUILD_DIR:-build}/tools/warm/tilecast-warm
[ -x "$warm" ] || { echo "sass: $warm not built (cmake --build build)" >&2; exit 1; }

# A fresh cache, so that every kernel is compiled and leaves its cubin; named by key, the kernel's
# name is in the cubin's symbols.
cache=$(mktemp -d)
TILECAST_JIT_DEBUG=2 TILECAST_CACHE_DIR="$cache" "$warm" --threads 2 "$@" >&2
mkdir -p "$OUT"
for cubin in "$cache"/v1/*.cubin; do
  # The kernel's name, demangled from its code section's: the spec spelled out (tile, stages, ...).
  name=$(readelf -SW "$cubin" 2>/dev/null | grep -o '\.text\.[^ ]*' | head -1 | sed "s/^\\.text\\.//" | c++filt | sed "s/(.*//")
  file="$OUT/$(basename "$cubin" .cubin).sass"
  NVDISASM_PATH="$bin" "$bin/cuobjdump" -sass "$cubin" >"$file"
  echo "== $file ($name)"
  python3 scripts/sass_summary.py "$file"
done
rm -rf "$cache"

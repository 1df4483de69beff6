#!/usr/bin/env bash
# The host code under AddressSanitizer (leaks included) and UndefinedBehaviorSanitizer: a build of
# its own (default /tmp/tilecast-build-asan; TC_ASAN_BUILD), then the cpu-labelled tests. Needs no
# GPU; ~40 minutes on 2 cores, so not in CI. (The ThreadSanitizer tests of the barrier model run
# in every build; they leave this one, whose runtime cannot sit beside TSan's.)
#
# With -fsanitize, gcc links what follows libasan without --as-needed, so the binaries name
# libcuda.so.1 although nothing calls it (the driver is reached through cudaGetDriverEntryPoint);
# a folder holding the toolkit's stub under that name lets them load where no driver is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
build=${TC_ASAN_BUILD:-/tmp/tilecast-build-asan}
san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
cmake -S . -B "$build" "${TILECAST_GENERATOR[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTILECAST_BUILD_TESTS=ON \
  "-DCMAKE_CXX_FLAGS=$san" \
  "-DCMAKE_CUDA_FLAGS=-Xcompiler=-fsanitize=address,-fsanitize=undefined,-fno-omit-frame-pointer" \
  "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" \
  "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=address,undefined" >/dev/null
cmake --build "$build" -j "$(nproc)"
stub=""
if ! ldconfig -p | grep -q 'libcuda\.so\.1 '; then
  stub=$(mktemp -d)
  trap 'rm -rf "$stub"' EXIT
  ln -s "$(dirname "$(command -v nvcc)")/../lib64/stubs/libcuda.so" "$stub/libcuda.so.1"
fi
LD_LIBRARY_PATH="${stub:+$stub:}${LD_LIBRARY_PATH:-}" \
  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$build" -L cpu -j "$(nproc)" --output-on-failure

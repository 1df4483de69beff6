# Sourced by the scripts: puts the CUDA toolkit on PATH, names the build folder and picks the
# generator (Ninja where installed, else CMake's default; a folder keeps the generator it was
# configured with).
export PATH="/usr/local/cuda/bin:${PATH}"
export TILECAST_BUILD_DIR="${TILECAST_BUILD_DIR:-build}"
TILECAST_GENERATOR=()
if [ ! -f "$TILECAST_BUILD_DIR/CMakeCache.txt" ] && command -v ninja >/dev/null; then
  TILECAST_GENERATOR=(-G Ninja)
fi
# Parallel build jobs: every core unless TILECAST_JOBS says otherwise.
export CMAKE_BUILD_PARALLEL_LEVEL="${TILECAST_JOBS:-${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}}"

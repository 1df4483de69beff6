# Sourced by the scripts: puts the CUDA toolkit on PATH.
export PATH="/usr/local/cuda/bin:${PATH}"
export TILECAST_BUILD_DIR="${TILECAST_BUILD_DIR:-build}"

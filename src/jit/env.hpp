// Environment variables the JIT reads. Each is read where it is used; none is cached in a global.
//   TILECAST_JIT_DEBUG      1: print key, hit/miss, compile seconds, resource report per kernel
//                           2: also write <key>.cubin next to the cache entry (cuobjdump -sass it)
//   TILECAST_CACHE_DIR      the disk cache folder (default $XDG_CACHE_HOME/tilecast, ~/.cache/tilecast)
//   TILECAST_CCCL_INCLUDE   the CCCL include folder NVRTC uses (see compiler.hpp)
#pragma once

#include <optional>
#include <string>

namespace tilecast::jit {

// The variable's value, or nullopt when it is unset or empty.
std::optional<std::string> env_string(const char* name);

// TILECAST_JIT_DEBUG as an integer level (0 when unset or not a number).
int jit_debug_level();

}  // namespace tilecast::jit

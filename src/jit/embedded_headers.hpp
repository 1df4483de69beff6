// The tilecast device headers (include/tilecast/device/**), embedded into the library at build time
// by embed_headers.cmake. NVRTC receives them as in-memory headers under these names, so a kernel
// source includes them exactly as nvcc code does: #include "tilecast/device/common.cuh".
#pragma once

#include <span>
#include <string_view>

namespace tilecast::jit {

struct EmbeddedHeader {
  std::string_view name;     // relative to include/, e.g. "tilecast/device/common.cuh"
  std::string_view content;  // the file's bytes
};

// Sorted by name; defined in the generated embedded_headers.cpp.
std::span<const EmbeddedHeader> embedded_headers();

}  // namespace tilecast::jit

// Compile through the disk cache: the one path from a KernelSpec to a CompiledKernel. Needs no
// GPU, so CI uses it to compile every kernel variant and check its resource report.
#pragma once

#include "jit/cache.hpp"
#include "jit/compiler.hpp"

namespace tilecast::jit {

struct BuildResult {
  CompiledKernel kernel;
  Hash128 key;
  bool disk_hit = false;
  double compile_seconds = 0;  // 0 on a hit
};

// Loads spec's entry from `cache`, or compiles it and stores it there. A cache that cannot be
// written costs a warning on stderr, never the kernel. TILECAST_JIT_DEBUG=1 prints key,
// hit/miss, compile seconds and the resource report on stderr. `fixed`: the compiler's
// fixed_options(), read once by the caller (the key and the compile take the same list).
BuildResult build_kernel(const Compiler& compiler, const DiskCache& cache, const KernelSpec& spec,
                         const std::vector<std::string>& fixed);
inline BuildResult build_kernel(const Compiler& compiler, const DiskCache& cache, const KernelSpec& spec) {
  return build_kernel(compiler, cache, spec, compiler.fixed_options());
}

}  // namespace tilecast::jit

#include "jit/build.hpp"

#include <chrono>
#include <cstdio>

#include "jit/env.hpp"
#include "tilecast/types.hpp"

namespace tilecast::jit {

BuildResult build_kernel(const Compiler& compiler, const DiskCache& cache, const KernelSpec& spec,
                         const std::vector<std::string>& fixed) {
  const int debug = jit_debug_level();
  BuildResult out;
  out.key = compiler.cache_key(spec, fixed);
  if (auto hit = cache.load(out.key)) {
    out.kernel = std::move(*hit);
    out.disk_hit = true;
  } else {
    const auto t0 = std::chrono::steady_clock::now();
    out.kernel = compiler.compile(spec, fixed);
    out.compile_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    try {
      cache.store(out.key, out.kernel, spec, debug >= 2);
    } catch (const Error& e) {
      std::fprintf(stderr, "%s (the kernel is compiled but not cached)\n", e.what());
    }
  }
  if (debug >= 1) {
    std::fprintf(stderr,
                 "tilecast jit: %s key=%s %s compile=%.3fs %s%s\n  name: %s\n  entry: %s\n",
                 out.disk_hit ? "disk-hit" : "miss", out.key.hex().c_str(),
                 out.kernel.lowered_name.c_str(), out.compile_seconds,
                 out.kernel.report.to_string().c_str(),
                 out.kernel.report.has_spills() ? " SPILLS" : "", spec.name_expression.c_str(),
                 cache.enabled() ? cache.entry_path(out.key).c_str() : "(no disk cache)");
  }
  return out;
}

}  // namespace tilecast::jit

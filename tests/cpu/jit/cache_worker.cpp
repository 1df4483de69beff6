// tilecast_jit_cache_worker <cache dir> <go file>: waits until <go file> exists (so several workers
// start together), builds the cluster-rank test kernel through the disk cache, then reads the
// entry back 50 times. Prints "hit=<0|1> cubin=<fnv128 of the cubin>"; exit 1 on any failure,
// including a read that finds the entry missing or torn.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "gpu/jit/test_kernels.hpp"
#include "jit/build.hpp"

int main(int argc, char** argv) {
  using namespace tilecast::jit;
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <cache dir> <go file>\n", argv[0]);
    return 2;
  }
  try {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!std::filesystem::exists(argv[2])) {
      if (std::chrono::steady_clock::now() > deadline) {
        std::fprintf(stderr, "worker: no go file\n");
        return 1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const Compiler compiler;
    const DiskCache cache(argv[1]);
    const KernelSpec spec = test::cluster_rank_spec();
    const BuildResult built = build_kernel(compiler, cache, spec);
    const std::string digest = fnv128(built.kernel.cubin).hex();
    for (int i = 0; i < 50; ++i) {
      const auto again = cache.load(built.key);
      if (!again) {
        std::fprintf(stderr, "worker: entry missing or torn on read %d\n", i);
        return 1;
      }
      if (!again->report.found || again->cubin.empty() ||
          again->lowered_name != built.kernel.lowered_name) {
        std::fprintf(stderr, "worker: entry read back differs on read %d\n", i);
        return 1;
      }
    }
    std::printf("hit=%d cubin=%s\n", built.disk_hit ? 1 : 0, digest.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "worker: %s\n", e.what());
    return 1;
  }
}

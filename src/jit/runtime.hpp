// The process's JIT: KernelSpec -> a Kernel loaded in the current CUDA context, through a memory
// cache (per context; a hit costs a string hash and a mutex, microseconds), the disk cache and
// NVRTC. Loaded libraries live as long as the Runtime; the process-wide one is never destroyed.
//
//   const Kernel& k = Runtime::instance().kernel(spec);
//   launch_kernel(k, {grid, block, cluster, smem, stream}, tensor_map_a, tensor_map_b, m, n, k);
#pragma once

#include <cuda.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "jit/build.hpp"
#include "jit/cache.hpp"
#include "jit/compiler.hpp"
#include "jit/kernel.hpp"

namespace tilecast::jit {

class Runtime {
 public:
  // The process-wide runtime, made on first use from the environment (DiskCache::default_dir(),
  // find_cccl_include()). Thread-safe.
  static Runtime& instance();

  explicit Runtime(Compiler compiler, std::filesystem::path cache_dir = DiskCache::default_dir());
  ~Runtime();  // unloads its libraries
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // The kernel of spec in the current CUDA context (when no context is current, the current
  // device's primary context is made current first). Thread-safe (threads that ask for one new
  // kernel at once compile it once); the reference stays valid for the Runtime's life. Throws
  // tilecast::Error on compile, load or driver failures.
  const Kernel& kernel(const KernelSpec& spec);

  // Compile or disk-load only: no GPU needed.
  BuildResult build(const KernelSpec& spec) const { return build_kernel(compiler_, cache_, spec); }

  struct Stats {
    uint64_t memory_hits = 0;
    uint64_t disk_hits = 0;
    uint64_t compiles = 0;
    uint64_t loads = 0;  // functions loaded into a context
  };
  Stats stats() const;

  const Compiler& compiler() const { return compiler_; }
  const DiskCache& disk_cache() const { return cache_; }

 private:
  CUlibrary library_for(const BuildResult& built);  // with mutex_ held

  const Compiler compiler_;
  const DiskCache cache_;
  mutable std::mutex mutex_;
  // (context, name expression, options, source) -> kernel loaded in that context.
  std::unordered_map<std::string, std::unique_ptr<Kernel>> kernels_;
  // disk key -> library, shared by every context (libraries are context-independent).
  std::unordered_map<std::string, CUlibrary> libraries_;
  // Disk keys a thread is building now: another thread that wants one waits for it (then finds
  // the kernel, or the disk entry) rather than running NVRTC on the same program alongside.
  std::unordered_set<std::string> building_;
  std::condition_variable built_;
  std::atomic<uint64_t> memory_hits_{0}, disk_hits_{0}, compiles_{0}, loads_{0};
};

// The current CUDA context, making the current device's primary context current when there is
// none. Throws tilecast::Error without a driver or device.
CUcontext current_context();

}  // namespace tilecast::jit

#include "jit/runtime.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>

#include "driver/driver.hpp"
#include "jit/env.hpp"
#include "tilecast/types.hpp"

namespace tilecast::jit {
namespace {

// The memory cache's key: exact, so two specs share an entry only when they are equal, and were
// compiled with the same options from the environment (`fixed`: TILECAST_JIT_OPTIONS changed in
// the process gives another kernel, as it gives another disk cache key).
std::string identity(CUcontext ctx, const KernelSpec& spec, const std::vector<std::string>& fixed) {
  size_t size = sizeof(ctx) + spec.name_expression.size() + spec.source.size() + 2;
  for (const auto& o : spec.options) size += o.size() + 1;
  for (const auto& o : fixed) size += o.size() + 1;
  std::string id;
  id.reserve(size);
  id.append(reinterpret_cast<const char*>(&ctx), sizeof(ctx));
  id.append(spec.name_expression).push_back('\0');
  for (const auto& o : fixed) id.append(o).push_back('\0');
  for (const auto& o : spec.options) id.append(o).push_back('\0');
  id.push_back('\0');
  id.append(spec.source);
  return id;
}

}  // namespace

CUcontext current_context() {
  const Driver& d = Driver::get();
  CUcontext ctx = nullptr;
  d.check(d.cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
  if (ctx != nullptr) return ctx;
  // No context yet: let the runtime make the current device's primary context current.
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e == cudaSuccess) e = cudaSetDevice(device);
  if (e != cudaSuccess) {
    throw Error(std::string("no CUDA context is current and the runtime could not make one: ") +
                cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
  }
  d.check(d.cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
  if (ctx == nullptr) throw Error("no CUDA context is current after cudaSetDevice");
  return ctx;
}

Runtime& Runtime::instance() {
  static Runtime* runtime = new Runtime(Compiler());  // never destroyed: see runtime.hpp
  return *runtime;
}

Runtime::Runtime(Compiler compiler, std::filesystem::path cache_dir)
    : compiler_(std::move(compiler)), cache_(std::move(cache_dir)) {}

Runtime::~Runtime() {
  kernels_.clear();
  if (libraries_.empty()) return;
  try {
    const Driver& d = Driver::get();
    for (auto& [key, library] : libraries_) d.cuLibraryUnload(library);  // errors ignored
  } catch (const Error&) {
  }
}

Runtime::Stats Runtime::stats() const {
  Stats s;
  s.memory_hits = memory_hits_.load();
  s.disk_hits = disk_hits_.load();
  s.compiles = compiles_.load();
  s.loads = loads_.load();
  return s;
}

CUlibrary Runtime::library_for(const BuildResult& built) {
  const std::string hex = built.key.hex();
  if (auto it = libraries_.find(hex); it != libraries_.end()) return it->second;
  const Driver& d = Driver::get();
  CUlibrary library = nullptr;
  d.check(d.cuLibraryLoadData(&library, built.kernel.cubin.data(), nullptr, nullptr, 0, nullptr,
                              nullptr, 0),
          "cuLibraryLoadData of " + built.kernel.lowered_name);
  libraries_.emplace(hex, library);
  return library;
}

const Kernel& Runtime::kernel(const KernelSpec& spec) {
  const CUcontext ctx = current_context();
  const std::vector<std::string> fixed = compiler_.fixed_options();
  std::string id = identity(ctx, spec, fixed);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = kernels_.find(id); it != kernels_.end()) {
      memory_hits_.fetch_add(1, std::memory_order_relaxed);
      return *it->second;
    }
  }
  const std::string key = compiler_.cache_key(spec, fixed).hex();
  {
    std::unique_lock<std::mutex> lock(mutex_);
    built_.wait(lock, [&] { return !building_.contains(key); });
    if (auto it = kernels_.find(id); it != kernels_.end()) return *it->second;  // built meanwhile, in this context
    building_.insert(key);
  }
  // However this call ends, the key is no longer being built: the waiting threads go on.
  struct Done {
    Runtime& r;
    const std::string& key;
    ~Done() {
      {
        std::lock_guard<std::mutex> lock(r.mutex_);
        r.building_.erase(key);
      }
      r.built_.notify_all();
    }
  } done{*this, key};

  // Compile outside the lock: cached launches of other kernels must not wait for NVRTC.
  const BuildResult built = build_kernel(compiler_, cache_, spec, fixed);
  (built.disk_hit ? disk_hits_ : compiles_).fetch_add(1, std::memory_order_relaxed);

  std::lock_guard<std::mutex> lock(mutex_);
  // (The wait above keeps a second build of one id out; were there one, emplace would drop it.)
  if (auto it = kernels_.find(id); it != kernels_.end()) return *it->second;
  const Driver& d = Driver::get();
  const CUlibrary library = library_for(built);
  CUkernel handle = nullptr;
  d.check(d.cuLibraryGetKernel(&handle, library, built.kernel.lowered_name.c_str()),
          "cuLibraryGetKernel(" + built.kernel.lowered_name + ")");
  CUfunction function = nullptr;
  d.check(d.cuKernelGetFunction(&function, handle),
          "cuKernelGetFunction(" + built.kernel.lowered_name + ")");
  CUdevice device = 0;
  d.check(d.cuCtxGetDevice(&device), "cuCtxGetDevice");
  auto loaded = std::make_unique<Kernel>(function, ctx, device, built.kernel.lowered_name,
                                         built.kernel.report, built.key);
  loads_.fetch_add(1, std::memory_order_relaxed);
  if (jit_debug_level() >= 1) {
    std::fprintf(stderr, "tilecast jit: loaded %s on device %d: %d registers, %d B local\n",
                 loaded->lowered_name().c_str(), static_cast<int>(device), loaded->num_registers(),
                 loaded->local_bytes());
  }
  const Kernel& out = *loaded;
  kernels_.emplace(std::move(id), std::move(loaded));
  return out;
}

}  // namespace tilecast::jit

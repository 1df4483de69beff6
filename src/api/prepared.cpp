#include "api/prepared.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "api/gemm_source.hpp"
#include "api/lru_cache.hpp"
#include "api/split_k.hpp"
#include "jit/runtime.hpp"

namespace tilecast::api {
namespace {

// The cache key: whole structs, compared and hashed as bytes, so a field added to any of them
// is part of the key without anyone writing it here. (group_data is zeroed: a plan depends on
// sizes and hints only.)
struct PlanKey {
  plan::GemmDesc desc;
  GemmConfig config;
  // 64 bits: GemmConfig holds an even number of 4-byte fields, and this one ends the struct on 8
  // bytes. (A field added to GemmConfig fails the assert below: make this 32 bits again.)
  int64_t device;
};
static_assert(std::has_unique_object_representations_v<PlanKey>,
              "PlanKey is compared as bytes: it must have no padding");

struct PlanKeyHash {
  size_t operator()(const PlanKey& k) const {
    const auto* bytes = reinterpret_cast<const unsigned char*>(&k);
    uint64_t h = 14695981039346656037ull;  // FNV-1a
    for (size_t i = 0; i < sizeof k; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};
struct PlanKeyEqual {
  bool operator()(const PlanKey& a, const PlanKey& b) const { return std::memcmp(&a, &b, sizeof a) == 0; }
};

using PlanCache = LruCache<PlanKey, std::shared_ptr<const PreparedGemm>, PlanKeyHash, PlanKeyEqual>;

std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}
PlanCache& cache() {
  static PlanCache c(kPlanCacheCapacity);
  return c;
}

std::shared_ptr<const PreparedGemm> prepare_now(const plan::GemmDesc& desc, const GemmConfig& config,
                                                DeviceState& dev) {
  auto p = std::make_shared<PreparedGemm>();
  plan::GemmDesc sizes = desc;
  sizes.problem.group_data = nullptr;  // device memory, and a cached plan serves every call of these sizes
  p->plan = plan::plan_gemm(sizes, dev.facts(), config);
  p->geometry = p->plan.geometry();
  p->device = &dev;
  jit::Runtime& jit = jit::Runtime::instance();
  p->main = &jit.kernel(gemm_kernel_source(p->plan.main.kernel));
  p->main->ensure_dynamic_smem(p->geometry.smem.launch_bytes);
  if (p->plan.workspace_bytes() > 0) {  // split, and not summed across the cluster
    if (!p->plan.reduces_in_gemm()) p->reduce = &jit.kernel(split_k_reduce_source(p->plan.desc));
    dev.note_workspace(p->plan.workspace_bytes(), false);
  }
  if (p->plan.companion) {
    p->companion = &jit.kernel(gemm_kernel_source(p->plan.companion->kernel));
    p->companion->ensure_dynamic_smem(p->geometry.smem.launch_bytes);
  }
  if (const char* debug = std::getenv("TILECAST_PLAN_DEBUG"); debug && *debug == '1') {
    const GemmProblem& pr = desc.problem;
    static const char* const kTypes[] = {"gemm", "batched gemm", "m-grouped gemm", "masked gemm", "k-grouped gemm"};
    std::fprintf(stderr, "tilecast: %s %ux%ux%u groups %u -> %s\n", kTypes[static_cast<uint32_t>(pr.type) % 5], pr.m,
                 pr.n, pr.k, pr.num_groups, p->plan.describe().c_str());
  }
  return p;
}

}  // namespace

std::shared_ptr<const PreparedGemm> prepared_gemm(const plan::GemmDesc& desc, const GemmConfig& config,
                                                  bool capturing) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) throw Error("cudaGetDevice failed");
  PlanKey key{desc, config, device};
  key.desc.problem.group_data = nullptr;
  {
    std::lock_guard lock(cache_mutex());
    if (auto* hit = cache().find(key)) return *hit;
  }
  if (capturing)
    throw Error("gemm: the stream is capturing a CUDA graph, and this problem's kernels are not loaded yet "
                "(compiling and loading cannot be captured): call tilecast::prepare() (for the grouped calls "
                "prepare_mgrouped_contiguous, prepare_mgrouped_masked or prepare_kgrouped) with the same arguments "
                "before the capture (the same shapes, strides and config, and A's and B's rows starting at the same "
                "offsets in 128-byte lines: the plan weighs them)");
  // Plan and compile outside the lock: other threads' cached calls must not wait for NVRTC.
  std::shared_ptr<const PreparedGemm> prepared = prepare_now(desc, config, DeviceState::current());
  std::lock_guard lock(cache_mutex());
  if (auto* raced = cache().find(key)) return *raced;  // another thread prepared it meanwhile
  return cache().insert(key, std::move(prepared));
}

size_t plan_cache_size() {
  std::lock_guard lock(cache_mutex());
  return cache().size();
}

}  // namespace tilecast::api

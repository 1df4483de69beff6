// tilecast::gemm: validate, plan (cached per shape and overrides), JIT (cached), build the TMA
// descriptors, launch on the caller's stream; with a companion, fork a second launch onto the
// side stream and join it back.
#include "tilecast/gemm.hpp"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "api/device_state.hpp"
#include "api/gemm_kernel.hpp"
#include "api/validate.hpp"
#include "jit/launch.hpp"
#include "jit/tma.hpp"
#include "tilecast/device/kernels/gemm_sm90/config.cuh"
#include "tilecast/diagnostics.hpp"

namespace tilecast {
namespace {

using api::GemmLaunchPlan;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string(what) + " failed: " + cudaGetErrorString(e));
}

TmaDescriptor descriptor(const MatrixView& v, uint32_t box_rows, uint32_t box_cols,
                         jit::TmaSwizzle swizzle = jit::TmaSwizzle::k128B) {
  const jit::TmaTensor t = jit::tma_3d(v.data, v.dtype, static_cast<uint64_t>(v.batch), static_cast<uint64_t>(v.rows),
                                       static_cast<uint64_t>(v.cols), static_cast<uint64_t>(v.ld()),
                                       static_cast<uint64_t>(v.batch_step()), 1, box_rows, box_cols, swizzle);
  const CUtensorMap map = jit::make_tensor_map(t);
  static_assert(sizeof(map) == sizeof(TmaDescriptor));
  TmaDescriptor d;
  std::memcpy(&d, &map, sizeof d);
  return d;
}

// The cached plan of one (device, shape, overrides).
const GemmLaunchPlan& plan_for(const plan::GemmShape& s, const GemmConfig& o) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<GemmLaunchPlan>> plans;
  api::DeviceState& dev = api::DeviceState::current();
  char key[320];
  std::snprintf(key, sizeof key, "%d|%u|%u|%u|%u|%u|%d|%d|%u.%u.%u.%u.%u.%u.%d.%d.%u.%u.%d", dev.device(),
                static_cast<uint32_t>(s.type), s.m, s.n, s.k, s.batch, static_cast<int>(s.out), s.has_c, o.block_m,
                o.block_n, o.block_k, o.stages, o.cluster_m, o.cluster_n, o.multicast_a, o.multicast_b, o.swizzle,
                o.max_sms, o.companion);
  std::lock_guard lock(mutex);
  auto& p = plans[key];
  if (!p) p = std::make_unique<GemmLaunchPlan>(api::make_launch_plan(s, o, dev));
  return *p;
}

}  // namespace

void gemm(const MatrixView& a, const MatrixView& b, const MatrixView& d, cudaStream_t stream, const MatrixView* c,
          const GemmConfig& config) {
  const plan::GemmShape shape = api::validate_gemm(a, b, d, c, api::query_pointer);
  const GemmLaunchPlan& lp = plan_for(shape, config);
  api::DeviceState& dev = api::DeviceState::current();
  const plan::KernelConfig& kc = lp.config;

  const TmaDescriptor tma_a = descriptor(a, kc.block_m, 64);
  const TmaDescriptor tma_b = descriptor(b, kc.block_n, 64);
  // D's box is one epilogue slab: 64 rows of 128 bytes (GemmSm90Config::kSlabRows, kSlabCols); a
  // tile width that is no multiple of it ends in a narrower slab, stored through a box that narrow,
  // unswizzled (GemmSm90Config::kNarrowSlabCols).
  const uint32_t slab_cols = shape.out == DType::kFP32 ? 32 : 64;
  const TmaDescriptor tma_d = descriptor(d, 64, slab_cols);
  const uint32_t narrow_cols = kc.block_n % slab_cols;
  const TmaDescriptor tma_d_narrow = narrow_cols ? descriptor(d, 64, narrow_cols, jit::TmaSwizzle::kNone) : tma_d;

  GemmParams params;
  params.problem.type = shape.type;
  params.problem.m = shape.m;
  params.problem.n = shape.n;
  params.problem.k = shape.k;
  params.problem.num_groups = shape.batch;
  params.swizzle = kc.swizzle;
  params.multicast_a = kc.multicast_a;
  params.multicast_b = kc.multicast_b;
  params.num_clusters = lp.main_clusters;
  if (c) {
    params.c_ptr = c->data;
    params.ldc = static_cast<uint64_t>(c->ld());
    params.c_batch = static_cast<uint64_t>(c->batch_step());
  }
  params.d_ptr = d.data;
  params.ldd = static_cast<uint64_t>(d.ld());
  params.d_batch = static_cast<uint64_t>(d.batch_step());
  params.wait = {wait_timeout_ns(), dev.wait_record_device()};

  const dim3 block(128 * (1 + kc.consumer_warpgroups));
  const uint32_t cs = kc.cluster.size();
  if (!lp.companion) {
    jit::launch_kernel(*lp.main, {dim3(lp.main_clusters * cs), block, dim3(cs), kc.smem_bytes, stream}, tma_a, tma_b,
                       tma_d, tma_d_narrow, params);
    return;
  }
  // Both launches claim units of the main cluster's shape from one counter pair.
  uint32_t* counters = dev.unit_counters(stream);
  params.unit_m = kc.cluster.m;
  params.unit_n = kc.cluster.n;
  params.unit_counter = counters;
  params.done_counter = counters + 1;
  params.total_clusters = lp.main_clusters + lp.companion_clusters;
  GemmParams side = params;
  side.num_clusters = lp.companion_clusters;
  std::lock_guard lock(dev.launch_mutex());
  check(cudaEventRecord(dev.fork_event(), stream), "cudaEventRecord");
  check(cudaStreamWaitEvent(dev.side_stream(), dev.fork_event(), 0), "cudaStreamWaitEvent");
  jit::launch_kernel(*lp.main, {dim3(lp.main_clusters * cs), block, dim3(cs), kc.smem_bytes, stream}, tma_a, tma_b,
                     tma_d, tma_d_narrow, params);
  const uint32_t ccs = kc.companion.size();
  jit::launch_kernel(*lp.companion, {dim3(lp.companion_clusters * ccs), block, dim3(ccs), kc.smem_bytes, dev.side_stream()},
                     tma_a, tma_b, tma_d, tma_d_narrow, side);
  check(cudaEventRecord(dev.join_event(), dev.side_stream()), "cudaEventRecord");
  check(cudaStreamWaitEvent(stream, dev.join_event(), 0), "cudaStreamWaitEvent");
}

}  // namespace tilecast

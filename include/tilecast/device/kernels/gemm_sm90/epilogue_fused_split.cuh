// The epilogue of a split-K kernel that reduces inside the GEMM (GemmKernelSpec::fused_reduce).
//
// Each consumer warpgroup stores its rows of the slice's FP32 partial tile into the workspace
// ([k_splits][batches][m][ws_ld], the layout the reduce kernel reads) straight from its
// registers, then counts itself on its tile's counter, one per (batch, tile, warpgroup): a
// warpgroup barrier, then one acq_rel add at GPU scope, which releases the stores of all 128
// threads (the pattern of CUTLASS's semaphore). The warpgroup whose add brings the count to
// k_splits is the tile's last. It resets the counter for the next GEMM (nothing else touches it in
// this one), reads the k_splits partials back in slice order, its own included (the reduce
// kernel's sum, in the reduce kernel's order: the same bits whichever slice finishes last), then
// applies alpha, beta * C and the bias (epilogue_value, the reduce kernel's too) and stores D in
// its dtype, reading C and the bias and writing D from registers as the swapped epilogue does: D is
// small wherever the planner splits K. No warpgroup waits for another: one that is not last just
// leaves, so no slice needs another to be resident.
//
// Elements past the tile's rows are neither stored nor read. A pair whose second column is past
// D's last (an odd n) is stored and read whole: the workspace's rows are padded to 4 elements.
#pragma once

#include <cuda_bf16.h>

#include "tilecast/device/kernels/epilogue_value.cuh"
#include "tilecast/device/kernels/gemm_sm90/accumulator_layout.cuh"
#include "tilecast/device/kernels/gemm_sm90/named_barrier.cuh"
#include "tilecast/device/kernels/gemm_sm90/smem.cuh"
#include "tilecast/device/ptx/instructions.cuh"

namespace tilecast {

template <typename Cfg>
class FusedSplitEpilogue {
 public:
  static_assert(!Cfg::kSplitColumns, "column-split kernels store through Epilogue (spec.cuh)");
  using Out = pick_type<Cfg::kOutputFP32, float, __nv_bfloat16>;
  using Bias = pick_type<Cfg::kBiasFP32, float, __nv_bfloat16>;
  using Acc = float[Cfg::kAtomsM][Cfg::kBlockN / 2];
  static constexpr uint32_t kGroups = Cfg::kBlockN / 8;  // 8-column accumulator groups
  // 8-column groups of a slice whose partials the sum loads together: 32 registers beside the
  // accumulators (16 groups, 64 registers, spilled 128 bytes at 128x144).
  static constexpr uint32_t kSumGroups = 8;

  // The signature of Epilogue's (consumer.cuh builds either): no shared memory, no descriptors.
  TC_DEVICE FusedSplitEpilogue(const GemmSm90Smem<Cfg>&, const TmaDescriptor&, const TmaDescriptor&,
                               const GemmParams& params, uint32_t warpgroup)
      : params_(params), warpgroup_(warpgroup), thread_(threadIdx.x % 128) {}

  TC_DEVICE void store(const TileWork& w, Acc& acc) {
    const GemmProblem& p = params_.problem;
    // The kernel's D group is slice * batches + batch (tile_scheduler.cuh, GroupGrid).
    const uint32_t slice = w.d_group / p.num_groups, batch = w.d_group % p.num_groups;
    // This thread's first column of the tile in the workspace, the same offset in every slice.
    const uint64_t tile = uint64_t{batch} * params_.ws_batch + uint64_t{w.row} * params_.ws_ld + w.col + first_col();
    float* mine = params_.workspace + slice * params_.ws_slice + tile;
    for_each_pair(w, [&](uint32_t a, uint32_t i, uint32_t row, uint32_t j) {
      *reinterpret_cast<float2*>(mine + row * params_.ws_ld + j * 8) = make_float2(acc[a][i], acc[a][i + 1]);
    });
    if (!last_to_arrive(counter_index(w, batch))) return;
    // The sum runs in slice order, from slice 0's value. A slice's loads of up to kSumGroups
    // groups go out together (one round trip to L2 per slice and chunk).
#pragma unroll
    for (uint32_t first = 0; first < kGroups; first += kSumGroups) {
      const uint32_t end = first + kSumGroups < kGroups ? first + kSumGroups : kGroups;
      const auto add_slice = [&](uint32_t s, bool first_slice) {
        const float* partial = params_.workspace + s * params_.ws_slice + tile;
        for_each_pair(
            w,
            [&](uint32_t a, uint32_t i, uint32_t row, uint32_t j) {
              const float2 v = __ldcg(reinterpret_cast<const float2*>(partial + row * params_.ws_ld + j * 8));
              acc[a][i] = first_slice ? v.x : acc[a][i] + v.x;
              acc[a][i + 1] = first_slice ? v.y : acc[a][i + 1] + v.y;
            },
            first, end);
      };
      add_slice(0, true);
#pragma unroll 1
      for (uint32_t s = 1; s < p.k_splits; ++s) add_slice(s, false);
    }
    store_d(w, batch, acc);
  }

  // Nothing is in flight: every store was an ordinary global store.
  TC_DEVICE void drain() {}

 private:
  // This thread's accumulator rows and columns in the atom (accumulator_layout.cuh).
  TC_DEVICE TC_FORCEINLINE uint32_t atom_row(uint32_t half) const { return acc_atom_row(thread_, half); }
  TC_DEVICE TC_FORCEINLINE uint32_t first_col() const { return acc_first_col(thread_); }

  // f(atom, accumulator index of the pair's first element, tile row, 8-column group) for each of
  // this thread's pairs that starts inside the tile's rows and columns, in groups [first, end).
  // (The pair's column is 8 * group + first_col(): callers add first_col() to a row's base once,
  // so that each group is an immediate offset from it.)
  template <typename F>
  TC_DEVICE TC_FORCEINLINE void for_each_pair(const TileWork& w, F&& f, uint32_t first = 0, uint32_t end = kGroups) const {
#pragma unroll
    for (uint32_t a = 0; a < Cfg::kAtomsM; ++a)
#pragma unroll
      for (uint32_t half = 0; half < 2; ++half) {
        const uint32_t row = warpgroup_ * Cfg::kWarpgroupM + a * kWgmmaAtomRows + atom_row(half);
        if (row >= w.rows) continue;
#pragma unroll
        for (uint32_t j = first; j < end; ++j)
          if (j * 8 + first_col() < w.cols) f(a, 4 * j + 2 * half, row, j);
      }
  }

  // This warpgroup's counter for the tile: (batch, m block, n block, warpgroup).
  TC_DEVICE TC_FORCEINLINE uint32_t counter_index(const TileWork& w, uint32_t batch) const {
    const GemmProblem& p = params_.problem;
    const uint32_t m_blocks = ceil_div(p.m, Cfg::kBlockM), n_blocks = ceil_div(p.n, Cfg::kBlockN);
    const uint32_t tile = (batch * m_blocks + w.row / Cfg::kBlockM) * n_blocks + w.col / Cfg::kBlockN;
    return tile * Cfg::kConsumerWarpgroups + warpgroup_;
  }

  // Counts this warpgroup's slice on the tile (after all 128 threads' stores) and says, to every
  // thread, whether it was the last of k_splits.
  TC_DEVICE bool last_to_arrive(uint32_t counter) {
    const uint32_t barrier = static_cast<uint32_t>(NamedBarrier::kFirstConsumerWarpgroup) + warpgroup_;
    __syncwarp();
    ptx::barrier_sync(barrier, 128);
    bool last = false;
    if (thread_ == 0) {
      uint32_t* count = params_.tile_counters + counter;
      last = __nv_atomic_fetch_add(count, 1u, __NV_ATOMIC_ACQ_REL, __NV_THREAD_SCOPE_DEVICE) ==
             params_.problem.k_splits - 1;
      if (last) __nv_atomic_store_n(count, 0u, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
    }
    __syncwarp();
    return ptx::barrier_red_or(barrier, 128, last);
  }

  // D = epilogue(sum) for the tile's elements, in D's dtype; C and the bias read from global memory.
  TC_DEVICE void store_d(const TileWork& w, uint32_t batch, const Acc& acc) const {
    Out* d = static_cast<Out*>(params_.d_ptr) + batch * params_.d_batch + uint64_t{w.row} * params_.ldd + w.col + first_col();
    const Out* c = static_cast<const Out*>(params_.c_ptr) + batch * params_.c_batch + uint64_t{w.row} * params_.ldc + w.col +
                   first_col();
    const Bias* bias = static_cast<const Bias*>(params_.bias_ptr) + w.col + first_col();
    const auto store_pair = [&](uint32_t a, uint32_t i, uint32_t row, uint32_t j) {
      // An even column of rows whose strides are multiples of 16 bytes: a pair is aligned.
      const bool pair = j * 8 + first_col() + 1 < w.cols;
      float2 c_pair = make_float2(0.0f, 0.0f), bias_pair = make_float2(0.0f, 0.0f);
      if constexpr (Cfg::kHasC) c_pair = load_pair(c + row * params_.ldc + j * 8, pair);
      if constexpr (Cfg::kHasBias) bias_pair = load_pair(bias + j * 8, pair);
      constexpr bool kC = Cfg::kHasC, kBias = Cfg::kHasBias;
      const float x = epilogue_value<kC, kBias>(acc[a][i], params_.alpha, params_.beta, c_pair.x, bias_pair.x);
      const float y = epilogue_value<kC, kBias>(acc[a][i + 1], params_.alpha, params_.beta, c_pair.y, bias_pair.y);
      Out* out = d + row * params_.ldd + j * 8;
      if (!pair) {
        out[0] = static_cast<Out>(x);
      } else if constexpr (Cfg::kOutputFP32) {
        *reinterpret_cast<float2*>(out) = make_float2(x, y);
      } else {
        *reinterpret_cast<__nv_bfloat162*>(out) = __floats2bfloat162_rn(x, y);
      }
    };
    for_each_pair(w, store_pair);
  }

  // Elements `at[0]` and, with `pair`, `at[1]`, as floats.
  template <typename T>
  static TC_DEVICE TC_FORCEINLINE float2 load_pair(const T* at, bool pair) {
    if (!pair) return make_float2(static_cast<float>(at[0]), 0.0f);
    if constexpr (sizeof(T) == 4) {
      return *reinterpret_cast<const float2*>(at);
    } else {
      return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(at));
    }
  }

  const GemmParams& params_;
  uint32_t warpgroup_;
  uint32_t thread_;
};

}  // namespace tilecast

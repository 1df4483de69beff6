// The epilogue of a split-K kernel whose slices are the CTAs of one cluster
// (GemmKernelSpec::k_cluster): CTA rank s of the cluster computes slice s of the tile, and the
// slices are summed through distributed shared memory, with no workspace and no second kernel.
//
// Per tile, every consumer warpgroup of every slice:
//   1. (from its second tile on) waits on reduce_empty: every slice has summed its band of this
//      CTA's previous partial tile, so the buffer may be overwritten;
//   2. stores its accumulators, FP32, into this CTA's partial tile in shared memory (row-major,
//      geometry's reduce_ld floats a row);
//   3. after a warpgroup barrier, its first thread fences at cluster scope and arrives on
//      reduce_full of every CTA of the cluster (which releases the stores of all 128 threads);
//   4. waits on reduce_full with acquire at cluster scope: every slice's partial tile is stored;
//   5. sums one band of the tile: the tile's 4-column vectors are cut into k_cluster x
//      consumer-warpgroups bands, warpgroup g of rank r takes band r * warpgroups + g. Each thread
//      loads a vector from every slice's buffer (peers' through DSMEM), all in flight together,
//      and sums them in slice order from slice 0: the reduce kernel's order, so the same bits
//      (split_k_reduce.cuh). Then alpha, beta * C and the bias (epilogue_value) and D's dtype,
//      C and the bias read from global memory and D stored from registers, 4 columns at a time;
//   6. after a warpgroup barrier, fences and arrives on reduce_empty of every CTA (its reads of
//      the peers' buffers are done).
// drain() waits for the last tile's reduce_empty, so that no CTA leaves while a peer may still
// read its shared memory. Every CTA of a cluster walks the same tiles (the scheduler gives the
// slices of one tile to one cluster), valid or phantom alike, so the barriers' counts
// (k_cluster x warpgroups arrivals a phase) balance on every tile; a phantom stores nothing and
// takes no part.
#pragma once

#include <cuda/ptx>
#include <cuda_bf16.h>

#include "tilecast/device/kernels/epilogue_value.cuh"
#include "tilecast/device/kernels/gemm_sm90/accumulator_layout.cuh"
#include "tilecast/device/kernels/gemm_sm90/named_barrier.cuh"
#include "tilecast/device/kernels/gemm_sm90/smem.cuh"
#include "tilecast/device/kernels/gemm_sm90/timeline.cuh"
#include "tilecast/device/ptx/instructions.cuh"

namespace tilecast {

template <typename Cfg>
class ClusterSplitEpilogue {
 public:
  static_assert(!Cfg::kSplitColumns, "column-split kernels store through Epilogue (spec.cuh)");
  using Out = pick_type<Cfg::kOutputFP32, float, __nv_bfloat16>;
  using Bias = pick_type<Cfg::kBiasFP32, float, __nv_bfloat16>;
  using Acc = float[Cfg::kAtomsM][Cfg::kBlockN / 2];
  static constexpr uint32_t kSlices = Cfg::kKCluster;
  static constexpr uint32_t kVector = 4;  // columns a thread sums and stores together
  static constexpr uint32_t kTileVectors = Cfg::kBlockM * Cfg::kBlockN / kVector;
  static constexpr uint32_t kBands = kSlices * Cfg::kConsumerWarpgroups;
  static constexpr uint32_t kBandVectors = (kTileVectors + kBands - 1) / kBands;
  static constexpr uint32_t kThreads = kWarpgroupThreads;
  static constexpr uint32_t kRounds = (kBandVectors + kThreads - 1) / kThreads;
  // Vectors a thread sums per batch of loads: with every slice's load of each in flight, at most
  // 8 float4 loads (32 registers) beside the addresses. (16 spilled 16-900 bytes at 128x144 and
  // 128x192, sm_90a, nvcc 13.0.)
  static constexpr uint32_t kLoadsInFlight = 8;
  static constexpr uint32_t kBatch = kSlices >= kLoadsInFlight ? 1 : kLoadsInFlight / kSlices;
  static_assert(Cfg::kBlockN % kVector == 0 && Cfg::kReduceLd % kVector == 0, "rows of whole float4s");
  // Arrivals that complete a phase of reduce_full or reduce_empty (kernel.cuh initializes them):
  // one per consumer warpgroup of every slice.
  static constexpr uint32_t kArrivalsPerPhase = kSlices * Cfg::kConsumerWarpgroups;

  // The signature of Epilogue's (consumer.cuh builds either).
  TC_DEVICE ClusterSplitEpilogue(const GemmSm90Smem<Cfg>& smem, const TmaDescriptor&, const TmaDescriptor&,
                                 const GemmParams& params, uint32_t warpgroup)
      : smem_(smem), params_(params), warpgroup_(warpgroup), thread_(threadIdx.x % kThreads),
        rank_(cuda::ptx::get_sreg_cluster_ctarank()) {}

  TC_DEVICE void store(const TileWork& w, Acc& acc) {
#ifdef TILECAST_TIMELINE
    steps_[0] = now_ns();
#endif
    // 1. The previous tile's band sums are done with this CTA's buffer.
    if (tiles_ > 0) mbarrier_wait_cluster(smem_.reduce_empty, (tiles_ - 1) & 1u, params_.wait, {BarrierId::kReduceEmpty, 0});
    // 2. This warpgroup's rows of the partial tile, every row and column of the tile (those past
    // the problem's edges hold the zeros the TMA filled in, and no band stores them).
#pragma unroll
    for (uint32_t a = 0; a < Cfg::kAtomsM; ++a)
#pragma unroll
      for (uint32_t half = 0; half < 2; ++half) {
        const uint32_t row = warpgroup_ * Cfg::kWarpgroupM + a * kWgmmaAtomRows + acc_atom_row(thread_, half);
        float* out = smem_.reduce + row * Cfg::kReduceLd + acc_first_col(thread_);
#pragma unroll
        for (uint32_t j = 0; j < Cfg::kBlockN / 8; ++j)
          *reinterpret_cast<float2*>(out + j * 8) = make_float2(acc[a][4 * j + 2 * half], acc[a][4 * j + 2 * half + 1]);
      }
    // 3 and 4.
    arrive_everywhere(smem_.reduce_full);
    mbarrier_wait_cluster(smem_.reduce_full, tiles_ & 1u, params_.wait, {BarrierId::kReduceFull, 0});
    consumer_stamp(Stamp::kPartialsIn);
#ifdef TILECAST_TIMELINE
    steps_[1] = now_ns();
#endif
    // 5.
    sum_band(w);
#ifdef TILECAST_TIMELINE
    steps_[2] = now_ns();
#endif
    // 6.
    arrive_everywhere(smem_.reduce_empty);
    ++tiles_;
  }

  // No CTA leaves while a peer may still read its partial tile.
  TC_DEVICE void drain() {
    if (tiles_ > 0) mbarrier_wait_cluster(smem_.reduce_empty, (tiles_ - 1) & 1u, params_.wait, {BarrierId::kReduceEmpty, 1});
#ifdef TILECAST_TIMELINE
    steps_[3] = now_ns();
    if (thread_ == 0 && tiles_ > 0) print_reduce_steps(warpgroup_, steps_);
#endif
  }

 private:
  // After all 128 threads of the warpgroup got here, its first thread arrives on `bar` in every
  // CTA of the cluster: one fence at cluster scope (cumulative over the warpgroup barrier), then
  // relaxed arrives. (A release arrive fences each time: with 8 slices the handshake took 2.7 us.)
  // compute-sanitizer's racecheck reports the partial tile's stores against the peers' band loads
  // (48,032 hazards on the four epilogue cases) whether one thread releases for its warpgroup or
  // every thread releases its own stores by its own release arrives (48,000): it does not follow
  // this handshake either way (bench/results/2026-12-02-h200-cluster-reduce-final-tree.md).
  TC_DEVICE void arrive_everywhere(uint64_t* bar) const {
    const uint32_t barrier = static_cast<uint32_t>(NamedBarrier::kFirstConsumerWarpgroup) + warpgroup_;
    __syncwarp();
    ptx::barrier_sync(barrier, kThreads);
    if (thread_ == 0) {
      release_to_cluster();
#pragma unroll
      for (uint32_t r = 0; r < kSlices; ++r) mbarrier_arrive_relaxed_cluster(bar, r);
    }
  }

  TC_DEVICE void sum_band(const TileWork& w) const {
    const GemmProblem& p = params_.problem;
    const uint32_t batch = w.d_group % p.num_groups;  // the kernel's D group is slice * batches + batch
    const uint32_t band = rank_ * Cfg::kConsumerWarpgroups + warpgroup_;
    const uint32_t first = band * kBandVectors;
    const uint32_t end = first + kBandVectors < kTileVectors ? first + kBandVectors : kTileVectors;
    const uint32_t local = static_cast<uint32_t>(__cvta_generic_to_shared(smem_.reduce));
    uint32_t slice_base[kSlices];
#pragma unroll
    for (uint32_t s = 0; s < kSlices; ++s) slice_base[s] = ptx::map_shared_rank(local, s);
#pragma unroll 1
    for (uint32_t round = 0; round < kRounds; round += kBatch) {
      float4 v[kBatch][kSlices];
#pragma unroll
      for (uint32_t b = 0; b < kBatch; ++b) {
        const uint32_t vec = first + (round + b) * kThreads + thread_;
        if (round + b >= kRounds || vec >= end) continue;
        const uint32_t offset = (vec * kVector / Cfg::kBlockN * Cfg::kReduceLd + vec * kVector % Cfg::kBlockN) * 4;
#pragma unroll
        for (uint32_t s = 0; s < kSlices; ++s) v[b][s] = ptx::ld_shared_cluster_f32x4(slice_base[s] + offset);
      }
#pragma unroll
      for (uint32_t b = 0; b < kBatch; ++b) {
        const uint32_t vec = first + (round + b) * kThreads + thread_;
        if (round + b >= kRounds || vec >= end) continue;
        float4 sum = v[b][0];
#pragma unroll
        for (uint32_t s = 1; s < kSlices; ++s) {
          sum.x += v[b][s].x;
          sum.y += v[b][s].y;
          sum.z += v[b][s].z;
          sum.w += v[b][s].w;
        }
        store_d(w, batch, vec * kVector / Cfg::kBlockN, vec * kVector % Cfg::kBlockN, sum);
      }
    }
  }

  // D = epilogue(sum) for the tile's row `row`, columns col..col + 3 (those inside the tile).
  TC_DEVICE void store_d(const TileWork& w, uint32_t batch, uint32_t row, uint32_t col, const float4& sum) const {
    if (row >= w.rows || col >= w.cols) return;
    const uint64_t d_at = batch * params_.d_batch + uint64_t{w.row + row} * params_.ldd + w.col + col;
    const uint64_t c_at = batch * params_.c_batch + uint64_t{w.row + row} * params_.ldc + w.col + col;
    const float acc[kVector] = {sum.x, sum.y, sum.z, sum.w};
    float out[kVector];
#pragma unroll
    for (uint32_t e = 0; e < kVector; ++e) {
      float c = 0.0f, bias = 0.0f;
      if (col + e < w.cols) {
        if constexpr (Cfg::kHasC) c = static_cast<float>(static_cast<const Out*>(params_.c_ptr)[c_at + e]);
        if constexpr (Cfg::kHasBias) bias = static_cast<float>(static_cast<const Bias*>(params_.bias_ptr)[w.col + col + e]);
      }
      out[e] = epilogue_value<Cfg::kHasC, Cfg::kHasBias>(acc[e], params_.alpha, params_.beta, c, bias);
    }
    Out* d = static_cast<Out*>(params_.d_ptr) + d_at;
    if (col + kVector <= w.cols) {
      // D's rows are 16-byte aligned and col is a multiple of 4: a whole vector is aligned.
      if constexpr (Cfg::kOutputFP32) {
        *reinterpret_cast<float4*>(d) = make_float4(out[0], out[1], out[2], out[3]);
      } else {
        const __nv_bfloat162 lo = __floats2bfloat162_rn(out[0], out[1]), hi = __floats2bfloat162_rn(out[2], out[3]);
        uint2 bits;
        bits.x = *reinterpret_cast<const uint32_t*>(&lo);
        bits.y = *reinterpret_cast<const uint32_t*>(&hi);
        *reinterpret_cast<uint2*>(d) = bits;
      }
      return;
    }
#pragma unroll
    for (uint32_t e = 0; e < kVector; ++e)
      if (col + e < w.cols) d[e] = static_cast<Out>(out[e]);
  }

  const GemmSm90Smem<Cfg>& smem_;
  const GemmParams& params_;
  uint32_t warpgroup_;
  uint32_t thread_;
  uint32_t rank_;       // this CTA's slice
  uint32_t tiles_ = 0;  // tiles stored: the reduce barriers' phase
#ifdef TILECAST_TIMELINE
  unsigned long long steps_[4] = {};  // the last tile's steps (timeline.cuh, print_reduce_steps)
#endif
};

}  // namespace tilecast

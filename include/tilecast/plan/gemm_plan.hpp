// The planner: (a GEMM, the device's facts, the caller's overrides) -> an immutable launch plan,
// complete before anything is compiled: the kernel spec of each launch, the schedule, the grids,
// the companion split, the SM budget and the cost model's estimate. Pure C++ (no GPU, no CUDA
// runtime): tilecast-plan prints it, the CPU tests check it, the API executes it.
#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "tilecast/device/kernels/gemm_sm90/geometry.cuh"
#include "tilecast/device/scheduler/tile_scheduler.cuh"
#include "tilecast/gemm.hpp"
#include "tilecast/plan/device_facts.hpp"

namespace tilecast::plan {

// L2's line, and the bytes of one row of a TMA box along a 128-byte swizzled operand (64 BF16).
inline constexpr uint32_t kL2LineBytes = 128;

// Whether rows of this alignment (box_row_alignment) start off an L2 line: such operands ask L2
// for 128-byte promotion (api::operand_promotion) and the planner costs their lines for it.
constexpr bool starts_off_a_line(uint8_t alignment) { return alignment < kL2LineBytes; }

// The largest power of two up to kL2LineBytes that divides a matrix's base address, its row
// stride and its batch stride (all in bytes; a stride of 0 divides everything).
uint8_t row_alignment(uint64_t base, uint64_t row_stride_bytes, uint64_t batch_stride_bytes);

// What the planner is told of a GEMM: the scheduler's problem (the planner reads its sizes and
// type only, never group_data: for grouped types that is device memory) and the epilogue.
struct GemmDesc {
  GemmProblem problem;
  DType out = DType::kBF16;
  // kMGroupedMasked: the rows per expert the caller expects, which the plan is made for
  // (grouped_surrogate.hpp); 0 for the other types.
  uint32_t expected_m = 0;
  DType bias_type = DType::kFP32;  // with has_bias
  bool has_c = false;              // C is read (beta != 0)
  bool has_bias = false;
  GemmLayout layout = GemmLayout::kNT;  // how A and B are stored (dense and batched problems)
  // Where the stored rows of A and B start: the largest power of two up to an L2 line (128 bytes)
  // that divides every row's address (row_alignment). A box row of 128 bytes that starts off a
  // line reads two lines from L2, so the cost model charges such operands more L2 lookups.
  uint8_t a_row_alignment = kL2LineBytes;
  uint8_t b_row_alignment = kL2LineBytes;
  // Explicit, so that no padding byte is left undefined: the plan cache compares and hashes whole
  // descs as bytes (api/prepared.cpp).
  uint8_t unused_[7] = {};
};
static_assert(std::has_unique_object_representations_v<GemmDesc>, "GemmDesc is compared as bytes: no padding");

// Sets d's row alignments for A and B stored at allocation-aligned bases in rows padded to a
// multiple of `row_bytes` (16, the least TMA takes: what a caller with tight tensors holds; 128:
// whole lines). The API's calls set them from the caller's views instead.
void assume_padded_rows(GemmDesc& d, uint32_t row_bytes = 16);

// Where the box rows of the kernel's A (`kernel_a`) or B start, as row_alignment says: with
// swapped operands the kernel's A is the caller's B. K-grouped boxes start at each group's first
// column, which the sizes do not say; only where every group's K is a multiple of 64 would they
// start on a line, so they are taken to start 16 bytes in. The cost model's L2 lines and the
// operand descriptors' L2 promotion (api::operand_promotion) both read it.
uint8_t box_row_alignment(const GemmDesc& d, bool kernel_a, bool swap);

// A dense (batch 1) or batched problem: D[batch][m][n] = A[batch][m][k] * B[batch][n][k]^T (+ C),
// with A and B stored as `layout` says. Sizes must fit 32 bits (the API validates them first).
GemmDesc dense_desc(int64_t m, int64_t n, int64_t k, int64_t batch, DType out, bool has_c,
                    GemmLayout layout = GemmLayout::kNT);
// The grouped problems of tilecast/grouped.hpp, by their sizes (no group data):
//   m-grouped contiguous: `rows` rows of A and D in all, `experts` matrices B;
//   masked: `experts` buffers of max_m rows, expected_m of them valid on average;
//   k-grouped: `groups` results of m x n over k columns in all, D += with `accumulate`.
GemmDesc mgrouped_contiguous_desc(ContiguousLayout layout, int64_t rows, int64_t n, int64_t k, int64_t experts,
                                  DType out);
GemmDesc mgrouped_masked_desc(int64_t max_m, int64_t n, int64_t k, int64_t experts, int64_t expected_m, DType out);
GemmDesc kgrouped_desc(int64_t m, int64_t n, int64_t k, int64_t groups, DType out, bool accumulate);

// One persistent launch: its kernel and how many clusters it runs.
struct KernelLaunch {
  GemmKernelSpec kernel;
  uint32_t clusters = 0;
};

// What the cost model says of a plan. Each time is a lower bound from one resource; the plan's
// estimate is the largest.
struct CostEstimate {
  double mma_us = 0;   // the busiest cluster's k-steps at the tensor cores' rate (shared-memory bound included)
  // The busiest CTA's operand bytes at one SM's share of the L2 -> SM bandwidth. Multicast does
  // not shrink it: every destination SM receives the whole box.
  double ingress_us = 0;
  // L2 lookups: the busiest CTA's own requests (its reads, each multicast once, in the lines its
  // box rows touch: two for a row that starts off a line) at one SM's share of L2's rate.
  double l2_us = 0;
  double hbm_us = 0;   // each operand and output once through HBM
  double stream_us = 0;  // the busiest CTA's operand bytes at one SM's streaming rate
  // Split-K: the reduce kernel (its launch behind the GEMM, then the partial sums read, C read,
  // D written), which runs after the GEMM and adds to its time. 0 without split-K.
  double reduce_us = 0;
  // Swapped operands (swap_ab): D, or the split workspace, stored element by element and
  // transposed after the main loop. 0 for unswapped plans.
  double swapped_store_us = 0;
  // The companion launch: what claiming units from the counter costs beyond the static kernel
  // (plan_cost.cpp, kDynamicUnitsUs). 0 without a companion.
  double dynamic_units_us = 0;
  double total_us = 0;
  double waves = 0;    // units per cluster of the launch(es)
  uint64_t l2_to_sm_bytes = 0;          // read from L2, each multicast once (as planned)
  uint64_t l2_to_sm_bytes_unicast = 0;  // delivered to SMs: every CTA's tiles, multicast or not
  double l2_line_bytes = 0;             // l2_to_sm_bytes in the whole lines their rows touch
};

// The split-K workspace starts with the fused reduce's tile counters: uint32 words that are zero
// between GEMMs (zeroed when the workspace is allocated; each fused GEMM's last arrivals reset the
// ones it counted on). Every split plan leaves that room, fused or not, so that no plan's partial
// sums ever overwrite the counters of another that shares the stream's workspace.
inline constexpr uint32_t kSplitCounterSlots = 16384;
inline constexpr uint64_t kSplitCounterBytes = uint64_t{kSplitCounterSlots} * sizeof(uint32_t);
// The counters a fused split kernel counts on: one per (batch, tile, consumer warpgroup).
uint64_t split_counters(const GemmProblem& problem, const GemmKernelSpec& kernel);

struct GemmPlan {
  GemmDesc desc;
  // The architecture planned for: only SM90's plans run (arch_spec(arch).runs_kernels); an SM100
  // plan's kernel spec stands for the 2-CTA kernel (block_m rows per CTA of each pair).
  Arch arch = Arch::kSM90;
  KernelLaunch main;
  // With clusters of 4, SMs that cannot hold one go to a companion launch of smaller clusters,
  // programmatically behind main's on its stream; both claim units of main's cluster shape from
  // one counter.
  std::optional<KernelLaunch> companion;
  // The scheduler config every launch runs (block sizes and cluster are main's; with a companion
  // the unit is main's cluster).
  TileConfig schedule;
  uint32_t sm_budget = 0;  // SMs the plan may use (GemmConfig::max_sms, else all)
  // Split-K slices (1: none). With more, main.kernel stores FP32 partial sums of each slice into
  // the workspace, and the reduce kernel sums them and applies desc's epilogue into D; or the GEMM
  // sums them itself (reduces_in_gemm).
  uint32_t k_splits = 1;
  CostEstimate cost;

  // A split whose GEMM sums the slices and applies desc's epilogue (fused_reduce, or k_cluster
  // across a cluster): no reduce kernel.
  bool reduces_in_gemm() const { return k_splits > 1 && (main.kernel.fused_reduce || main.kernel.k_cluster > 1); }
  // A split whose slices the reduce kernel sums: a second launch behind the GEMM.
  bool launches_reduce_kernel() const { return needs_reduce_kernel(main.kernel); }
  // Bytes of the split-K workspace (0 without, and summed across a cluster): the tile counters
  // (kSplitCounterBytes), then k_splits x batch x m x workspace_ld() FP32 partial sums.
  uint64_t workspace_bytes() const;
  // Elements between rows of a partial result: n rounded up to 16 bytes, so that every row of the
  // workspace starts where a TMA store and the reduce kernel's 16-byte loads may.
  uint32_t workspace_ld() const;

  GemmGeometry geometry() const { return gemm_geometry(main.kernel); }
  // The problem the kernels walk: desc's, with m and n swapped where main.kernel.swap_ab (the
  // kernel computes D^T = B * A^T). The workspace and the reduce keep desc's own m x n layout.
  GemmProblem kernel_problem() const;
  std::string describe() const;  // one line: tile, stages, cluster, multicast, grid, companion, estimate
};

// Throws tilecast::Error naming the field and its valid range when an override is out of range.
void check_overrides(const GemmConfig& overrides);

// Every plan the cost model weighed for facts.arch's spec, cheapest first, the plans within 5% of
// the cheapest in the tie order that src/plan/gemm_plan.cpp states (one launch, fewer split-K
// slices, the smaller cluster on SM90 and the larger on SM100, ...). Fields of `overrides` that
// are set are taken as given; an impossible override throws tilecast::Error.
std::vector<GemmPlan> rank_plans(const GemmDesc& desc, const DeviceFacts& facts, const GemmConfig& overrides = {});

// The first of rank_plans.
GemmPlan plan_gemm(const GemmDesc& desc, const DeviceFacts& facts, const GemmConfig& overrides = {});

// The chosen plan, then the next `alternatives` ranked ones with predicted time, waves and bytes:
// what tilecast-plan and tilecast-bench --plan-only print.
std::string format_plans(const std::vector<GemmPlan>& ranked, size_t alternatives);

}  // namespace tilecast::plan

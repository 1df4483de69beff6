// What the kernel does with group data it cannot honour: it records which entry was wrong and
// traps, so that the call fails loudly instead of returning a result for sizes nobody asked for.
//
// Grouped GEMMs read their sizes (masked counts, expert offsets or row indices, k-group sizes)
// from device memory that the host never reads (the calls must stay capturable and free of host
// syncs), so the host cannot check them: the kernel does. The scheduler clamps every entry so that
// nothing is read or written out of bounds; meanwhile warp 1 of every CTA (idle otherwise: only
// thread 0 of the producer warpgroup issues loads) checks its share of the entries against the
// rules of scheduler/group_data_check.cuh. A bad entry is recorded in host-mapped memory that
// stays readable after the trap has ended the context (as a timed-out wait's is,
// pipeline/mbarrier.cuh), and tilecast::take_layout_fault_report() turns it into a message. The
// check costs the producer and the consumers nothing: it runs beside them, on its own warp, from
// the start of the kernel. (A trap in the consumers' epilogue cost them registers they do not
// have: 56-100 bytes of spills at 128x256, measured before ptx::trap_kernel.)
#pragma once

#include "tilecast/device/ptx/instructions.cuh"
#include "tilecast/device/scheduler/group_data_check.cuh"

namespace tilecast {

enum class LayoutFault : uint32_t {
  kNone = 0,
  kMaskedRows = 1,    // masked_m[index] = value is outside [0, bound = max_m]
  kOffsets = 2,       // offsets[index] = value: not 0 first, below offsets[index - 1] = other, or
                      // past bound = M
  kExpertIndex = 3,   // row index holds value, neither -1 nor an expert below bound = experts
  kExpertRun = 4,     // row index holds expert value after row index - 1's other, inside a
                      // 128-row run
  kGroupK = 5,        // k_sizes[index] = value: negative, no multiple of kKGroupAlignment, or the
                      // sizes before it (other) plus it pass bound = K
};

inline constexpr uint32_t kLayoutFaultMagic = 0x7C0FA017u;

// Written by the trapping thread; `magic` last, once the rest is visible. Several threads may trap
// at once: the record is then one of theirs, possibly mixed, which still names a bad entry.
struct LayoutFaultRecord {
  uint32_t magic;
  uint32_t fault;  // LayoutFault
  uint32_t index;
  int32_t value;
  int64_t other;
  uint32_t bound;
  uint32_t block;
  uint32_t thread;
  uint32_t unused;
};

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

TC_DEVICE TC_FORCEINLINE void trap_layout_fault(LayoutFaultRecord* record, LayoutFault fault, uint32_t index,
                                                int32_t value, int64_t other, uint32_t bound) {
  if (record) {
    volatile LayoutFaultRecord* v = record;
    v->fault = static_cast<uint32_t>(fault);
    v->index = index;
    v->value = value;
    v->other = other;
    v->bound = bound;
    v->block = blockIdx.x;
    v->thread = threadIdx.x;
    __threadfence_system();
    v->magic = kLayoutFaultMagic;
    __threadfence_system();
  }
  ptx::trap_kernel();
}

// The record of check `i` that failed (an entry alone; k-grouped sums are total_k_fits's).
template <GemmType kType>
TC_DEVICE TC_FORCEINLINE void trap_bad_entry(const GemmProblem& p, uint32_t index, LayoutFaultRecord* record) {
  const int32_t value = p.group_data[index];
  if constexpr (kType == GemmType::kMGroupedMasked) {
    trap_layout_fault(record, LayoutFault::kMaskedRows, index, value, 0, p.m);
  } else if constexpr (kType == GemmType::kKGroupedContiguous) {
    trap_layout_fault(record, LayoutFault::kGroupK, index, value, 0, p.k);
  } else if (p.contiguous_layout == ContiguousLayout::kOffsets) {
    trap_layout_fault(record, LayoutFault::kOffsets, index, value, index ? p.group_data[index - 1] : 0, p.m);
  } else if (value < -1 || (value >= 0 && static_cast<uint32_t>(value) >= p.num_groups)) {
    trap_layout_fault(record, LayoutFault::kExpertIndex, index, value, 0, p.num_groups);
  } else {
    trap_layout_fault(record, LayoutFault::kExpertRun, index, value, p.group_data[index - 1], p.num_groups);
  }
}

// One warp of each CTA of the launch, all lanes calling: checks entries i = 32 * blockIdx.x + lane,
// then every 32 * gridDim.x-th (the CTAs split the entries), and CTA 0 sums the k-group sizes.
template <GemmType kType>
TC_DEVICE void check_group_data(const GemmProblem& p, LayoutFaultRecord* record, uint32_t lane) {
  const uint32_t entries = entries_to_check(p);
  for (uint32_t i = blockIdx.x * 32 + lane; i < entries; i += gridDim.x * 32)
    if (entry_is_bad(p, i)) trap_bad_entry<kType>(p, i, record);
  if constexpr (kType == GemmType::kKGroupedContiguous) {
    if (blockIdx.x != 0) return;
    uint64_t sum = 0;
    for (uint32_t g = lane; g < p.num_groups; g += 32) sum += p.group_data[g] > 0 ? p.group_data[g] : 0;
    __syncwarp();
    for (uint32_t offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xFFFFFFFFu, sum, offset);
    if (total_k_fits(p, sum) || lane != 0) return;
    // The first group whose columns pass K, for the record.
    int64_t before = 0;
    uint32_t g = 0;
    for (; g + 1 < p.num_groups; ++g) {
      const int32_t v = p.group_data[g] > 0 ? p.group_data[g] : 0;
      if (before + v > p.k) break;
      before += v;
    }
    trap_layout_fault(record, LayoutFault::kGroupK, g, p.group_data[g], before, p.k);
  }
}

#endif

}  // namespace tilecast

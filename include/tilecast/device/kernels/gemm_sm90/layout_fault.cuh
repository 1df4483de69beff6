// What the kernel does with group data it cannot honour: it records which entry was wrong and
// traps, so that the call fails loudly instead of returning a result for sizes nobody asked for.
//
// Grouped GEMMs read their sizes (masked counts, expert offsets or row indices, k-group sizes)
// from device memory that the host never reads (the calls must stay capturable and free of host
// syncs), so the host cannot check them: the kernel does. The scheduler clamps a bad entry so
// that nothing is read or written out of bounds and flags it (TileScheduler::layout_fault); the
// producer traps on a flag once its walk is over, and the epilogue traps where a row-index block
// turns out to hold two experts. The record goes to host-mapped memory that stays readable after
// the trap has ended the context (as a timed-out wait's does, pipeline/mbarrier.cuh), and
// tilecast::take_layout_fault_report() turns it into a message.
#pragma once

#include "tilecast/device/scheduler/problem.cuh"

namespace tilecast {

enum class LayoutFault : uint32_t {
  kNone = 0,
  kMaskedRows = 1,    // masked_m[index] = value is outside [0, bound = max_m]
  kOffsets = 2,       // offsets[index] = value: not 0 first, below offsets[index - 1] = other, or past bound = M
  kExpertIndex = 3,   // row-index layout: row index holds value, neither -1 nor an expert below bound = experts
  kExpertRun = 4,     // row-index layout: row index holds expert value inside a block of expert other
  kGroupK = 5,        // k_sizes[index] = value: negative, or the sizes before it (other) plus it pass bound = K
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

TC_DEVICE TC_FORCEINLINE void trap_layout_fault(LayoutFaultRecord* record, LayoutFault fault, uint32_t index, int32_t value,
                                        int64_t other, uint32_t bound) {
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
  __trap();
}

// The fault a scheduler flagged (TileScheduler::layout_fault: 1 + the index of the bad entry),
// with the entry read again for the record.
template <GemmType kType>
TC_DEVICE TC_FORCEINLINE void trap_scheduler_fault(const GemmProblem& p, uint32_t fault_at, LayoutFaultRecord* record) {
  const uint32_t i = fault_at - 1;
  const int32_t value = p.group_data[i];
  if constexpr (kType == GemmType::kMGroupedMasked) {
    trap_layout_fault(record, LayoutFault::kMaskedRows, i, value, 0, p.m);
  } else if constexpr (kType == GemmType::kKGroupedContiguous) {
    int64_t before = 0;
    for (uint32_t g = 0; g < i; ++g) before += p.group_data[g];
    trap_layout_fault(record, LayoutFault::kGroupK, i, value, before, p.k);
  } else if constexpr (kType == GemmType::kMGroupedContiguous) {
    if (p.contiguous_layout == ContiguousLayout::kOffsets)
      trap_layout_fault(record, LayoutFault::kOffsets, i, value, i ? p.group_data[i - 1] : 0, p.m);
    else
      trap_layout_fault(record, LayoutFault::kExpertIndex, i, value, 0, p.num_groups);
  }
}

#endif

}  // namespace tilecast

// Where a barrier keeps its words, and their values at allocation.
//
// A barrier "channel" is a small block at the same offset of every rank's symmetric region. Two
// kernels that may run at the same time (two streams) need two channels: their rounds would
// otherwise consume each other's signals (NVSHMEM #84 is that bug with one counter).
//
//   offset   0  uint32 grid counter    this rank only (grid sync of its CTAs)
//   offset   4  uint32 phase counter   this rank only (phase/sign form: rounds done)
//   offset   8  uint32 epoch           this rank only (epoch form: rounds done)
//   offset 128  int32  signal[2]       every rank adds here (phase/sign form)
//   offset 256  uint32 inbox[R]        slot s written by rank s only (epoch form)
//
// The remotely written words sit on their own 128-byte lines, apart from the words this rank
// updates itself.
#pragma once

#include "tilecast/device/common.cuh"
#include "tilecast/device/comm/phase_sign.cuh"
#include "tilecast/device/comm/symmetric_map.cuh"

namespace tilecast::comm {

struct BarrierLayout {
  static constexpr uint32_t kGridCounter = 0;
  static constexpr uint32_t kPhaseCounter = 4;
  static constexpr uint32_t kEpoch = 8;
  static constexpr uint32_t kSignal = 128;
  static constexpr uint32_t kInbox = 256;
  static constexpr uint32_t kAlign = 256;

  TC_HOST_DEVICE static constexpr uint64_t bytes(int32_t num_ranks) {
    return (kInbox + 4ull * static_cast<uint64_t>(num_ranks) + kAlign - 1) / kAlign * kAlign;
  }
};

// The pointers a kernel needs, all into this rank's region (peers' words are reached through
// `map`). Passed by value.
struct BarrierState {
  SymmetricMap map;
  uint32_t* grid_counter;
  uint32_t* phase_counter;
  int32_t* signal;   // [2]
  uint32_t* epoch;
  uint32_t* inbox;   // [num_ranks]

  // The channel whose block starts `offset` bytes into every rank's region.
  TC_HOST_DEVICE static BarrierState at(const SymmetricMap& map, uint64_t offset) {
    char* base = static_cast<char*>(map.local()) + offset;
    return {map,
            reinterpret_cast<uint32_t*>(base + BarrierLayout::kGridCounter),
            reinterpret_cast<uint32_t*>(base + BarrierLayout::kPhaseCounter),
            reinterpret_cast<int32_t*>(base + BarrierLayout::kSignal),
            reinterpret_cast<uint32_t*>(base + BarrierLayout::kEpoch),
            reinterpret_cast<uint32_t*>(base + BarrierLayout::kInbox)};
  }
};

// Writes a channel's initial contents into `block` (host memory, BarrierLayout::bytes(R) bytes),
// to be copied into a rank's region before any rank can signal it (then a host barrier across
// ranks). Every rank must use the same start values. Start values other than 0 serve the
// counter-wrap tests.
TC_HOST_DEVICE inline void barrier_initial_block(void* block, int32_t num_ranks,
                                                 uint32_t first_counter = 0,
                                                 uint32_t first_epoch = 0) {
  char* b = static_cast<char*>(block);
  for (uint64_t i = 0; i < BarrierLayout::bytes(num_ranks); ++i) b[i] = 0;
  *reinterpret_cast<uint32_t*>(b + BarrierLayout::kGridCounter) = 0;
  *reinterpret_cast<uint32_t*>(b + BarrierLayout::kPhaseCounter) = first_counter;
  *reinterpret_cast<uint32_t*>(b + BarrierLayout::kEpoch) = first_epoch;
  int32_t* signal = reinterpret_cast<int32_t*>(b + BarrierLayout::kSignal);
  for (uint32_t s = 0; s < 2; ++s) signal[s] = phase_sign_initial_slot(first_counter, s, num_ranks);
  uint32_t* inbox = reinterpret_cast<uint32_t*>(b + BarrierLayout::kInbox);
  for (int32_t r = 0; r < num_ranks; ++r) inbox[r] = first_epoch;
}

}  // namespace tilecast::comm

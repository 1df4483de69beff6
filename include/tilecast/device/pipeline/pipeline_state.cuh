// Position in a ring of kStages shared-memory stages: which stage, and the parity of the phase
// its mbarriers are in. Shared by the kernel roles and the CPU simulator.
#pragma once

#include "tilecast/device/common.cuh"

namespace tilecast {

template <uint32_t kStages>
struct PipelineState {
  static_assert(kStages >= 1, "a pipeline needs at least one stage");
  uint32_t stage = 0;
  uint32_t phase = 0;  // parity of the current phase of stage `stage`'s barriers

  TC_HOST_DEVICE constexpr void advance() {
    if (++stage == kStages) {
      stage = 0;
      phase ^= 1u;
    }
  }
};

// The producer's first pass over the ring must not wait for releases that never happened. An
// mbarrier's "previous" phase (parity 1) counts as complete right after init, so a producer that
// waits with the opposite parity of the consumers passes the first kStages waits at once.
template <uint32_t kStages>
TC_HOST_DEVICE constexpr PipelineState<kStages> producer_start_state() {
  return PipelineState<kStages>{0, 1};
}

template <uint32_t kStages>
TC_HOST_DEVICE constexpr PipelineState<kStages> consumer_start_state() {
  return PipelineState<kStages>{0, 0};
}

}  // namespace tilecast

// The kernel's named barriers (bar.sync ids): 0 is __syncthreads; consumer warpgroup i meets
// alone on kFirstConsumerWarpgroup + i (the epilogue's slab handoffs); the consumers and the
// k-tail clearers of k-grouped GEMMs hand a stage over on kTailReady and back on kTailCleared
// (k_tail.cuh).
#pragma once

#include "tilecast/device/common.cuh"

namespace tilecast {

// At most two consumer warpgroups (gemm_spec_error), so ids 1 and 2 are theirs.
enum class NamedBarrier : uint32_t { kFirstConsumerWarpgroup = 1, kTailReady = 3, kTailCleared = 4 };

}  // namespace tilecast

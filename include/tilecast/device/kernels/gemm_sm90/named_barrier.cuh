// The kernel's named barriers (bar.sync ids): 0 is __syncthreads; consumer warpgroup i meets
// alone on kFirstConsumerWarpgroup + i (the epilogue's slab handoffs); a ping-pong kernel's two
// warpgroups hand their turns over on kFirstMainloopTurn and the one after (consumer.cuh). (The
// k-tail handover of k-grouped GEMMs runs on mbarriers: k_tail.cuh says why.)
#pragma once

#include "tilecast/device/common.cuh"

namespace tilecast {

// At most three consumer warpgroups (gemm_spec_error), so ids 1 to 3 are theirs; 4 and 5 the turns'.
enum class NamedBarrier : uint32_t { kFirstConsumerWarpgroup = 1, kFirstMainloopTurn = 4 };

}  // namespace tilecast

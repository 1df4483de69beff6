// The kernel's named barriers (bar.sync ids): 0 is __syncthreads; consumer warpgroup i meets
// alone on kFirstConsumerWarpgroup + i (the epilogue's slab handoffs). (The k-tail handover of
// k-grouped GEMMs runs on mbarriers: k_tail.cuh says why.)
#pragma once

#include "tilecast/device/common.cuh"

namespace tilecast {

// At most three consumer warpgroups (gemm_spec_error), so ids 1 to 3 are theirs.
enum class NamedBarrier : uint32_t { kFirstConsumerWarpgroup = 1 };

}  // namespace tilecast

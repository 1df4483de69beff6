// Everything a kernel needs for grid sync and the cross-rank barrier; see each header for why.
#pragma once

#include "tilecast/device/comm/barrier_state.cuh"
#include "tilecast/device/comm/cross_rank_barrier.cuh"
#include "tilecast/device/comm/epoch.cuh"
#include "tilecast/device/comm/grid_sync.cuh"
#include "tilecast/device/comm/phase_sign.cuh"
#include "tilecast/device/comm/symmetric_map.cuh"
#include "tilecast/device/comm/timeout.cuh"

// Host side of the cross-rank barrier: channel set-up and the timeout users configure.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "tilecast/comm/rendezvous.hpp"
#include "tilecast/device/comm/barrier_state.cuh"
#include "tilecast/device/comm/timeout.cuh"

namespace tilecast::comm {

// The barrier timeout: TILECAST_BARRIER_TIMEOUT_MS if set (a positive integer, else
// tilecast::Error), otherwise 300 s, long enough for peers still JIT-compiling their first
// kernel (DeepGEMM users saw 135 s of skew).
uint64_t barrier_timeout_ns();

// Collective: writes channel `offset`'s initial words into this rank's region (`map.local()`),
// waits for the copy, then meets every rank at a barrier, so that no rank signals a peer whose
// words are not yet initialised. Every rank passes the same offset and start values. The words
// are never reset afterwards; call this once per channel, with no kernel using it in flight.
void init_barrier_channel(Rendezvous& rendezvous, const SymmetricMap& map, uint64_t offset,
                          uint32_t first_counter = 0, uint32_t first_epoch = 0,
                          cudaStream_t stream = nullptr);

}  // namespace tilecast::comm

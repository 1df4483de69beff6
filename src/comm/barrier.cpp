#include "tilecast/comm/barrier.hpp"

#include <cstdlib>
#include <string>
#include <vector>

#include "tilecast/types.hpp"

namespace tilecast::comm {

uint64_t barrier_timeout_ns() {
  const char* v = std::getenv("TILECAST_BARRIER_TIMEOUT_MS");
  if (v == nullptr || *v == '\0') return WaitPolicy{}.timeout_ns;
  char* end = nullptr;
  const unsigned long long ms = std::strtoull(v, &end, 10);
  if (*end != '\0' || ms == 0 || ms > 24ull * 3600 * 1000) {
    throw Error(std::string("TILECAST_BARRIER_TIMEOUT_MS=") + v +
                " is not a timeout in milliseconds (1 .. 86400000)");
  }
  return ms * 1000ull * 1000ull;
}

void init_barrier_channel(Rendezvous& rendezvous, const SymmetricMap& map, uint64_t offset,
                          uint32_t first_counter, uint32_t first_epoch, cudaStream_t stream) {
  const uint64_t bytes = BarrierLayout::bytes(map.num_ranks);
  if (offset % BarrierLayout::kAlign != 0 || offset + bytes > map.stride) {
    throw Error("barrier channel at offset " + std::to_string(offset) + " (" + std::to_string(bytes) +
                " bytes, 256-byte aligned) does not fit a region of " + std::to_string(map.stride) + " bytes");
  }
  std::vector<char> block(bytes);
  barrier_initial_block(block.data(), map.num_ranks, first_counter, first_epoch);
  char* dst = static_cast<char*>(map.local()) + offset;
  check_cuda(cudaMemcpyAsync(dst, block.data(), bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync (barrier channel)");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (barrier channel)");
  rendezvous.barrier();
}

}  // namespace tilecast::comm

#include "tilecast/comm/launch.hpp"

#include <string>

namespace tilecast::comm {

int max_coresident_ctas(const void* kernel, int block_threads, size_t dynamic_smem, int device) {
  int per_sm = 0;
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block_threads, dynamic_smem),
             "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  int sms = 0;
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  return per_sm * sms;
}

void require_coresident(const void* kernel, int grid, int block_threads, size_t dynamic_smem,
                        int device, const char* what) {
  if (grid <= 0 || block_threads <= 0) {
    throw Error(std::string(what) + ": grid " + std::to_string(grid) + " x block " +
                std::to_string(block_threads) + " is empty");
  }
  const int most = max_coresident_ctas(kernel, block_threads, dynamic_smem, device);
  if (grid > most) {
    throw Error(std::string(what) + " has a grid sync, so all " + std::to_string(grid) +
                " CTAs must be resident at once, but GPU " + std::to_string(device) + " holds at most " +
                std::to_string(most) + " of them (" + std::to_string(block_threads) + " threads, " +
                std::to_string(dynamic_smem) + " bytes of dynamic shared memory each); use a smaller grid");
  }
}

}  // namespace tilecast::comm

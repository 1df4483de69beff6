// Makes a tensor's device current for one call (the caller's framework may have another one
// current) and restores the previous one after: shared by the GEMM and grouped bindings.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "tilecast/types.hpp"

namespace tilecast::python {

class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    int current = -1;
    if (cudaGetDevice(&current) == cudaSuccess && current == device) return;
    cudaGetLastError();
    if (cudaSetDevice(device) != cudaSuccess) {
      cudaGetLastError();
      throw Error("cudaSetDevice(" + std::to_string(device) + ") failed");
    }
    previous_ = current;
  }
  ~DeviceGuard() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace tilecast::python

// A compiled kernel loaded into one CUDA context: the function handle the launch helpers take.
// Made by Runtime (runtime.hpp), which keeps it alive for the process.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "jit/hash.hpp"
#include "jit/resource_report.hpp"

namespace tilecast::jit {

class Kernel {
 public:
  // Reads the function's register and local-memory attributes; sets "non-portable cluster size
  // allowed" so clusters above 8 CTAs can launch where the GPU allows them.
  Kernel(CUfunction function, CUcontext context, CUdevice device, std::string lowered_name,
         ResourceReport report, Hash128 key);
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  CUfunction function() const { return function_; }
  CUcontext context() const { return context_; }
  CUdevice device() const { return device_; }
  const std::string& lowered_name() const { return lowered_name_; }
  const ResourceReport& report() const { return report_; }  // from ptxas at compile time
  const Hash128& key() const { return key_; }
  int num_registers() const { return num_registers_; }      // CU_FUNC_ATTRIBUTE_NUM_REGS
  int local_bytes() const { return local_bytes_; }          // CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES

  // Raises CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES to at least `bytes`: one driver call
  // the first time a larger size is asked for, none after. Thread-safe.
  void ensure_dynamic_smem(uint32_t bytes) const;

 private:
  CUfunction function_;
  CUcontext context_;
  CUdevice device_;
  std::string lowered_name_;
  ResourceReport report_;
  Hash128 key_;
  int num_registers_ = 0;
  int local_bytes_ = 0;
  mutable std::atomic<uint32_t> dynamic_smem_limit_{0};
  mutable std::mutex smem_mutex_;
};

}  // namespace tilecast::jit

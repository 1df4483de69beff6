#include "jit/kernel.hpp"

#include "driver/driver.hpp"

namespace tilecast::jit {

Kernel::Kernel(CUfunction function, CUcontext context, CUdevice device, std::string lowered_name,
               ResourceReport report, Hash128 key)
    : function_(function),
      context_(context),
      device_(device),
      lowered_name_(std::move(lowered_name)),
      report_(report),
      key_(key) {
  const Driver& d = Driver::get();
  d.check(d.cuFuncGetAttribute(&num_registers_, CU_FUNC_ATTRIBUTE_NUM_REGS, function_),
          "cuFuncGetAttribute(NUM_REGS) of " + lowered_name_);
  d.check(d.cuFuncGetAttribute(&local_bytes_, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, function_),
          "cuFuncGetAttribute(LOCAL_SIZE_BYTES) of " + lowered_name_);
  d.check(d.cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
          "cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED) of " + lowered_name_);
}

void Kernel::ensure_dynamic_smem(uint32_t bytes) const {
  if (bytes <= dynamic_smem_limit_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(smem_mutex_);
  if (bytes <= dynamic_smem_limit_.load(std::memory_order_relaxed)) return;
  const Driver& d = Driver::get();
  d.check(d.cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                               static_cast<int>(bytes)),
          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES=" + std::to_string(bytes) + ") of " +
              lowered_name_);
  dynamic_smem_limit_.store(bytes, std::memory_order_release);
}

}  // namespace tilecast::jit

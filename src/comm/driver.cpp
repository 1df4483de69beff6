#include "driver.hpp"

#include <cuda_runtime.h>

#include "tilecast/types.hpp"

namespace tilecast::comm::detail {
namespace {

template <typename F>
void load(F*& fn, const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult status{};
  // 12000: every call here has had its current signature since CUDA 12.0 at the latest.
  const cudaError_t e = cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &status);
  if (e != cudaSuccess || status != cudaDriverEntryPointSuccess || p == nullptr) {
    throw Error(std::string("the CUDA driver has no entry point ") + name + " (" +
                cudaGetErrorString(e) + "); symmetric memory needs a CUDA 12+ driver");
  }
  fn = reinterpret_cast<F*>(p);
}

Driver load_all() {
  Driver d{};
  load(d.cuDeviceGet, "cuDeviceGet");
  load(d.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  load(d.cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity");
  load(d.cuMemCreate, "cuMemCreate");
  load(d.cuMemRelease, "cuMemRelease");
  load(d.cuMemExportToShareableHandle, "cuMemExportToShareableHandle");
  load(d.cuMemImportFromShareableHandle, "cuMemImportFromShareableHandle");
  load(d.cuMemAddressReserve, "cuMemAddressReserve");
  load(d.cuMemAddressFree, "cuMemAddressFree");
  load(d.cuMemMap, "cuMemMap");
  load(d.cuMemUnmap, "cuMemUnmap");
  load(d.cuMemSetAccess, "cuMemSetAccess");
  load(d.cuGetErrorString, "cuGetErrorString");
  return d;
}

}  // namespace

const Driver& driver() {
  static const Driver d = load_all();
  return d;
}

void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* msg = nullptr;
  if (driver().cuGetErrorString(r, &msg) != CUDA_SUCCESS || msg == nullptr) msg = "unknown error";
  throw Error(std::string(what) + " failed: " + msg + " (CUresult " + std::to_string(r) + ")");
}

}  // namespace tilecast::comm::detail

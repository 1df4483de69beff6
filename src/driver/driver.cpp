#include "driver/driver.hpp"

#include <cuda_runtime_api.h>

#include <string>

#include "tilecast/types.hpp"

namespace tilecast {
namespace {

const char* query_result_text(cudaDriverEntryPointQueryResult q) {
  switch (q) {
    case cudaDriverEntryPointSuccess: return "found";
    case cudaDriverEntryPointSymbolNotFound: return "symbol not found in the driver";
    case cudaDriverEntryPointVersionNotSufficent: return "the driver is older than this ABI version";
  }
  return "unknown query result";
}

template <class Fn>
void load(Fn& slot, const char* symbol, unsigned abi_version) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t e =
      cudaGetDriverEntryPointByVersion(symbol, &fn, abi_version, cudaEnableLegacyStream, &query);
  if (e != cudaSuccess || query != cudaDriverEntryPointSuccess || fn == nullptr) {
    throw Error(std::string("CUDA driver function ") + symbol + " (ABI " +
                std::to_string(abi_version) + ") is unavailable: " +
                (e != cudaSuccess ? std::string(cudaGetErrorName(e)) + " (" +
                                        cudaGetErrorString(e) + ")"
                                  : std::string(query_result_text(query))));
  }
  slot = reinterpret_cast<Fn>(fn);
}

Driver load_all() {
  Driver d;
  load(d.cuGetErrorString, "cuGetErrorString", 6000);
  load(d.cuGetErrorName, "cuGetErrorName", 6000);
  load(d.cuCtxGetCurrent, "cuCtxGetCurrent", 4000);
  load(d.cuCtxGetDevice, "cuCtxGetDevice", 2000);
  load(d.cuDeviceGetAttribute, "cuDeviceGetAttribute", 2000);
  load(d.cuLibraryLoadData, "cuLibraryLoadData", 12000);
  load(d.cuLibraryUnload, "cuLibraryUnload", 12000);
  load(d.cuLibraryGetKernel, "cuLibraryGetKernel", 12000);
  load(d.cuKernelGetFunction, "cuKernelGetFunction", 12000);
  load(d.cuFuncSetAttribute, "cuFuncSetAttribute", 9000);
  load(d.cuFuncGetAttribute, "cuFuncGetAttribute", 2020);
  load(d.cuLaunchKernelEx, "cuLaunchKernelEx", 11060);
  load(d.cuOccupancyMaxActiveClusters, "cuOccupancyMaxActiveClusters", 11070);
  load(d.cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled", 12000);
  load(d.cuDeviceGet, "cuDeviceGet", 2000);
  load(d.cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity", 10020);
  load(d.cuMemCreate, "cuMemCreate", 10020);
  load(d.cuMemRelease, "cuMemRelease", 10020);
  load(d.cuMemExportToShareableHandle, "cuMemExportToShareableHandle", 10020);
  load(d.cuMemImportFromShareableHandle, "cuMemImportFromShareableHandle", 10020);
  load(d.cuMemAddressReserve, "cuMemAddressReserve", 10020);
  load(d.cuMemAddressFree, "cuMemAddressFree", 10020);
  load(d.cuMemMap, "cuMemMap", 10020);
  load(d.cuMemUnmap, "cuMemUnmap", 10020);
  load(d.cuMemSetAccess, "cuMemSetAccess", 10020);
  load(d.cuMemGetAddressRange, "cuMemGetAddressRange", 3020);
  load(d.cuPointerGetAttribute, "cuPointerGetAttribute", 4000);
  return d;
}

}  // namespace

const Driver& Driver::get() {
  // A static initialised by a throwing call is initialised again on the next call.
  static const Driver driver = load_all();
  return driver;
}

std::string Driver::describe(CUresult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName == nullptr || cuGetErrorName(r, &name) != CUDA_SUCCESS) name = nullptr;
  if (cuGetErrorString == nullptr || cuGetErrorString(r, &text) != CUDA_SUCCESS) text = nullptr;
  std::string out = name ? name : "CUresult " + std::to_string(static_cast<int>(r));
  if (text) out += std::string(" (") + text + ")";
  return out;
}

void Driver::check(CUresult r, std::string_view call) const {
  if (r != CUDA_SUCCESS) throw Error(std::string(call) + " failed: " + describe(r));
}

}  // namespace tilecast

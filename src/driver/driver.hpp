// The CUDA driver API without linking libcuda: every function the library calls (module, launch
// and TMA for the JIT; virtual memory and IPC handles for comm) is looked up once through the
// runtime's cudaGetDriverEntryPointByVersion (cudart is linked statically), at the ABI version
// named next to it, and kept in this one table. The legacy-stream variants are taken: stream 0 means
// the legacy default stream (pass cudaStreamPerThread for the per-thread one).
//
//   const Driver& d = Driver::get();
//   d.check(d.cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string_view>

namespace tilecast {

struct Driver {
  PFN_cuGetErrorString_v6000 cuGetErrorString = nullptr;
  PFN_cuGetErrorName_v6000 cuGetErrorName = nullptr;
  PFN_cuCtxGetCurrent_v4000 cuCtxGetCurrent = nullptr;
  PFN_cuCtxGetDevice_v2000 cuCtxGetDevice = nullptr;
  PFN_cuDeviceGetAttribute_v2000 cuDeviceGetAttribute = nullptr;
  PFN_cuLibraryLoadData_v12000 cuLibraryLoadData = nullptr;
  PFN_cuLibraryUnload_v12000 cuLibraryUnload = nullptr;
  PFN_cuLibraryGetKernel_v12000 cuLibraryGetKernel = nullptr;
  PFN_cuKernelGetFunction_v12000 cuKernelGetFunction = nullptr;
  PFN_cuFuncSetAttribute_v9000 cuFuncSetAttribute = nullptr;
  PFN_cuFuncGetAttribute_v2020 cuFuncGetAttribute = nullptr;
  PFN_cuLaunchKernelEx_v11060 cuLaunchKernelEx = nullptr;
  PFN_cuOccupancyMaxActiveClusters_v11070 cuOccupancyMaxActiveClusters = nullptr;
  PFN_cuTensorMapEncodeTiled_v12000 cuTensorMapEncodeTiled = nullptr;
  // Virtual memory and shareable handles (comm's symmetric heap).
  PFN_cuDeviceGet_v2000 cuDeviceGet = nullptr;
  PFN_cuMemGetAllocationGranularity_v10020 cuMemGetAllocationGranularity = nullptr;
  PFN_cuMemCreate_v10020 cuMemCreate = nullptr;
  PFN_cuMemRelease_v10020 cuMemRelease = nullptr;
  PFN_cuMemExportToShareableHandle_v10020 cuMemExportToShareableHandle = nullptr;
  PFN_cuMemImportFromShareableHandle_v10020 cuMemImportFromShareableHandle = nullptr;
  PFN_cuMemAddressReserve_v10020 cuMemAddressReserve = nullptr;
  PFN_cuMemAddressFree_v10020 cuMemAddressFree = nullptr;
  PFN_cuMemMap_v10020 cuMemMap = nullptr;
  PFN_cuMemUnmap_v10020 cuMemUnmap = nullptr;
  PFN_cuMemSetAccess_v10020 cuMemSetAccess = nullptr;
  // The API's argument checks: the allocation a view lies in, and whether it is cudaMalloc's
  // (legacy-IPC capable) rather than virtual memory, whose range is one physical chunk.
  PFN_cuMemGetAddressRange_v3020 cuMemGetAddressRange = nullptr;
  PFN_cuPointerGetAttribute_v4000 cuPointerGetAttribute = nullptr;

  // The table, filled on first use. Throws tilecast::Error naming the function that could not be
  // found (no driver, a driver older than the ABI version asked for); a later call tries again.
  static const Driver& get();

  // Throws tilecast::Error "<call> failed: CUDA_ERROR_X (<description>)" unless r is CUDA_SUCCESS.
  void check(CUresult r, std::string_view call) const;
  // "CUDA_ERROR_X (<description>)".
  std::string describe(CUresult r) const;
};

}  // namespace tilecast

// A diagnostic: how another library (cuBLASLt) encodes its TMA descriptors and launches its kernels.
// Preloaded into any CUDA program (LD_PRELOAD), it subscribes to CUPTI's driver-API callbacks and
// prints, to stderr:
//   TME  every cuTensorMapEncodeTiled call's arguments (rank, dims, strides, box, element strides,
//        interleave, swizzle, L2 promotion, OOB fill) and the 128 bytes it produced;
//   TML  the first launch of each kernel name (cuLaunchKernelEx, cuLaunchKernel): grid, block,
//        cluster, shared memory, and every parameter's bytes (cuFuncGetParamInfo, or the launch's
//        parameter buffer), so that a descriptor encoded without the driver's call can be read there.
// Build: g++ -O1 -shared -fPIC scripts/cupti_tensor_maps.cpp -o cupti_tensor_maps.so
//          -I/usr/local/cuda/include -L<the toolkit's libcupti folder> -lcupti -lcuda
// Run:   LD_PRELOAD=./cupti_tensor_maps.so build/tools/bench/tilecast-bench --shape 1024,1024,4096 ...
//        (with libcupti.so.13 on LD_LIBRARY_PATH; not under Nsight Compute, which holds CUPTI itself)
// bench/results/2026-12-04-h200-ring-turn.md, section 2, has what it read from cuBLASLt.
#include <cuda.h>
#include <cupti.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

namespace {

std::mutex g_mutex;
std::set<std::string> g_launched;  // kernel names already printed
int g_encodes = 0;
constexpr int kMaxEncodes = 64;           // a timing loop encodes the same maps on every call
constexpr size_t kMaxParamBytes = 4096;   // per kernel

void print_hex(const void* p, size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) std::fprintf(stderr, "%02x%s", b[i], (i % 16 == 15) ? (i + 1 < n ? " | " : "") : "");
}

void on_encode(const cuTensorMapEncodeTiled_params* a, CUresult result) {
  if (g_encodes++ >= kMaxEncodes) return;
  std::fprintf(stderr, "TME type %d rank %u addr %p dims", static_cast<int>(a->tensorDataType), a->tensorRank,
               a->globalAddress);
  for (cuuint32_t i = 0; i < a->tensorRank; ++i) std::fprintf(stderr, " %llu", static_cast<unsigned long long>(a->globalDim[i]));
  std::fprintf(stderr, " strides");
  for (cuuint32_t i = 0; i + 1 < a->tensorRank; ++i)
    std::fprintf(stderr, " %llu", static_cast<unsigned long long>(a->globalStrides[i]));
  std::fprintf(stderr, " box");
  for (cuuint32_t i = 0; i < a->tensorRank; ++i) std::fprintf(stderr, " %u", a->boxDim[i]);
  std::fprintf(stderr, " estrides");
  for (cuuint32_t i = 0; i < a->tensorRank; ++i) std::fprintf(stderr, " %u", a->elementStrides[i]);
  std::fprintf(stderr, " interleave %d swizzle %d promotion %d oobfill %d result %d\nTME bytes ",
               static_cast<int>(a->interleave), static_cast<int>(a->swizzle), static_cast<int>(a->l2Promotion),
               static_cast<int>(a->oobFill), static_cast<int>(result));
  print_hex(a->tensorMap, sizeof(CUtensorMap));
  std::fprintf(stderr, "\n");
}

void on_launch(const char* name, CUfunction f, void** params, void** extra, unsigned gx, unsigned gy, unsigned gz,
               unsigned bx, unsigned smem, unsigned cx, unsigned cy, unsigned cz) {
  if (!name || !g_launched.insert(name).second) return;
  std::fprintf(stderr, "TML %s grid %u,%u,%u block %u smem %u cluster %u,%u,%u\n", name, gx, gy, gz, bx, smem, cx, cy, cz);
  // The parameters as one buffer (CU_LAUNCH_PARAM_BUFFER_POINTER), in lines of 16 bytes.
  const void* buffer = nullptr;
  size_t buffer_size = 0;
  for (void** e = extra; e && *e != CU_LAUNCH_PARAM_END; e += 2) {
    if (*e == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = e[1];
    if (*e == CU_LAUNCH_PARAM_BUFFER_SIZE) buffer_size = *static_cast<size_t*>(e[1]);
  }
  if (buffer) {
    std::fprintf(stderr, "TML buffer %zu bytes\n", buffer_size);
    for (size_t at = 0; at < buffer_size && at < kMaxParamBytes; at += 16) {
      std::fprintf(stderr, "TML buffer +%04zu: ", at);
      print_hex(static_cast<const char*>(buffer) + at, buffer_size - at < 16 ? buffer_size - at : 16);
      std::fprintf(stderr, "\n");
    }
  }
  if (!params) return;
  size_t total = 0;
  for (size_t i = 0;; ++i) {
    size_t offset = 0, size = 0;
    if (cuFuncGetParamInfo(f, i, &offset, &size) != CUDA_SUCCESS) break;
    std::fprintf(stderr, "TML param %zu offset %zu size %zu: ", i, offset, size);
    if (total < kMaxParamBytes) print_hex(params[i], size);
    total += size;
    std::fprintf(stderr, "\n");
  }
}

void CUPTIAPI callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  std::lock_guard<std::mutex> lock(g_mutex);
  if (id == CUPTI_DRIVER_TRACE_CBID_cuTensorMapEncodeTiled && info->callbackSite == CUPTI_API_EXIT) {
    on_encode(static_cast<const cuTensorMapEncodeTiled_params*>(info->functionParams),
              *static_cast<const CUresult*>(info->functionReturnValue));
  } else if (id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx && info->callbackSite == CUPTI_API_ENTER) {
    const auto* p = static_cast<const cuLaunchKernelEx_params*>(info->functionParams);
    unsigned cx = 1, cy = 1, cz = 1;
    for (unsigned i = 0; i < p->config->numAttrs; ++i) {
      if (p->config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
        cx = p->config->attrs[i].value.clusterDim.x;
        cy = p->config->attrs[i].value.clusterDim.y;
        cz = p->config->attrs[i].value.clusterDim.z;
      }
    }
    on_launch(info->symbolName, p->f, p->kernelParams, p->extra, p->config->gridDimX, p->config->gridDimY, p->config->gridDimZ,
              p->config->blockDimX, p->config->sharedMemBytes, cx, cy, cz);
  } else if (id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel && info->callbackSite == CUPTI_API_ENTER) {
    const auto* p = static_cast<const cuLaunchKernel_params*>(info->functionParams);
    on_launch(info->symbolName, p->f, p->kernelParams, p->extra, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX,
              p->sharedMemBytes, 1, 1, 1);
  }
}

struct Subscriber {
  Subscriber() {
    CUpti_SubscriberHandle handle;
    if (cuptiSubscribe(&handle, callback, nullptr) != CUPTI_SUCCESS) {
      std::fprintf(stderr, "cupti_tensor_maps: cuptiSubscribe failed\n");
      return;
    }
    cuptiEnableCallback(1, handle, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuTensorMapEncodeTiled);
    cuptiEnableCallback(1, handle, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx);
    cuptiEnableCallback(1, handle, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
  }
} g_subscriber;

}  // namespace

// A diagnostic: which bytes of a CUtensorMap each cuTensorMapEncodeTiled argument sets, to read a
// descriptor another library encoded (scripts/cupti_tensor_maps.cpp prints them from its launch).
// Encodes one base map (bf16, rank 3, 4096 x 1024 x 1, rows of 8 KiB, a 64 x 64 box, 128-byte
// swizzle, 256-byte L2 promotion, no OOB fill) and then the same map with one argument changed,
// and prints bytes 8-79 of each (0-7 are the address).
// Build: g++ -std=c++20 -O1 scripts/tensor_map_fields.cpp -o tensor_map_fields -I/usr/local/cuda/include
//          -L/usr/local/cuda/lib64/stubs -lcuda        (runs where a GPU and its driver are)
// bench/results/2026-12-04-h200-ring-turn.md, section 2, has what it printed on the H200.
#include <cuda.h>

#include <cstdio>
#include <cstring>

namespace {

struct Variant {
  const char* name;
  CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  cuuint32_t rank = 3;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  CUtensorMapFloatOOBfill oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  cuuint32_t row_element_stride = 1;
};

bool check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return true;
  std::fprintf(stderr, "%s failed: %d\n", what, static_cast<int>(r));
  return false;
}

}  // namespace

int main() {
  CUdevice dev;
  CUcontext ctx;
  CUdeviceptr base;
  constexpr size_t kBytes = size_t{4096} * 1024 * 2;
  if (!check(cuInit(0), "cuInit") || !check(cuDeviceGet(&dev, 0), "cuDeviceGet") ||
      !check(cuCtxCreate(&ctx, nullptr, 0, dev), "cuCtxCreate") || !check(cuMemAlloc(&base, kBytes), "cuMemAlloc"))
    return 1;
  Variant variants[] = {{.name = "base"},
                        {.name = "rank 2", .rank = 2},
                        {.name = "f16", .type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16},
                        {.name = "u16", .type = CU_TENSOR_MAP_DATA_TYPE_UINT16},
                        {.name = "promotion none", .promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE},
                        {.name = "promotion 64", .promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_64B},
                        {.name = "promotion 128", .promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B},
                        {.name = "oob nan", .oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA},
                        {.name = "swizzle 64", .swizzle = CU_TENSOR_MAP_SWIZZLE_64B},
                        {.name = "swizzle none", .swizzle = CU_TENSOR_MAP_SWIZZLE_NONE},
                        {.name = "row element stride 2", .row_element_stride = 2}};
  for (const Variant& v : variants) {
    const cuuint64_t dims[3] = {4096, 1024, 1}, strides[2] = {8192, 8192 * 1024};
    const cuuint32_t box[3] = {64, 64, 1}, element_strides[3] = {1, v.row_element_stride, 1};
    CUtensorMap map;
    std::memset(&map, 0, sizeof map);
    const CUresult r = cuTensorMapEncodeTiled(&map, v.type, v.rank, reinterpret_cast<void*>(base), dims, strides, box,
                                              element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, v.swizzle, v.promotion, v.oob);
    const auto* bytes = reinterpret_cast<const unsigned char*>(&map);
    std::printf("%-22s result %d  ", v.name, static_cast<int>(r));
    for (int i = 8; i < 80; ++i) std::printf("%02x%s", bytes[i], i % 8 == 7 ? " " : "");
    std::printf("\n");
  }
  cuMemFree(base);
  cuCtxDestroy(ctx);
  return 0;
}

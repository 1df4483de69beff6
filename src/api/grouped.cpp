// The grouped entry points (tilecast/grouped.hpp): each names its form's arguments for the
// shared call path (call.cpp), which checks them all in api/validate.cpp.
#include "tilecast/grouped.hpp"

#include "api/call.hpp"

namespace tilecast {
namespace {

api::CallArgs grouped_call(const MatrixView& a, const MatrixView& b, const MatrixView& d, const api::GroupArgs& group,
                           const GemmConfig& config) {
  api::CallArgs args;
  args.a = a;
  args.b = b;
  args.d = d;
  args.group = group;
  if (group.accumulate) {  // D += A_g * B_g^T is the C = D epilogue
    args.c = d;
    args.has_c = true;
  }
  args.config = config;
  return args;
}

api::GroupArgs contiguous(const GroupedLayout& layout) {
  return {.type = GemmType::kMGroupedContiguous, .layout = layout.kind, .data = layout.data};
}

api::GroupArgs masked(const int32_t* masked_m, int64_t expected_m) {
  return {.type = GemmType::kMGroupedMasked, .data = masked_m, .expected_m = expected_m};
}

api::GroupArgs kgrouped(const int32_t* k_sizes, bool accumulate) {
  return {.type = GemmType::kKGroupedContiguous, .data = k_sizes, .accumulate = accumulate};
}

}  // namespace

void gemm_mgrouped_contiguous(const MatrixView& a, const MatrixView& b, const MatrixView& d,
                              const GroupedLayout& layout, cudaStream_t stream, const GemmConfig& config) {
  api::run_call(grouped_call(a, b, d, contiguous(layout), config), stream);
}

void gemm_mgrouped_masked(const MatrixView& a, const MatrixView& b, const MatrixView& d, const int32_t* masked_m,
                          int64_t expected_m, cudaStream_t stream, const GemmConfig& config) {
  api::run_call(grouped_call(a, b, d, masked(masked_m, expected_m), config), stream);
}

void gemm_kgrouped(const MatrixView& a, const MatrixView& b, const MatrixView& d, const int32_t* k_sizes,
                   bool accumulate, cudaStream_t stream, const GemmConfig& config) {
  api::run_call(grouped_call(a, b, d, kgrouped(k_sizes, accumulate), config), stream);
}

void prepare_mgrouped_contiguous(const MatrixView& a, const MatrixView& b, const MatrixView& d,
                                 const GroupedLayout& layout, const GemmConfig& config) {
  api::prepare_call(grouped_call(a, b, d, contiguous(layout), config));
}

void prepare_mgrouped_masked(const MatrixView& a, const MatrixView& b, const MatrixView& d, const int32_t* masked_m,
                             int64_t expected_m, const GemmConfig& config) {
  api::prepare_call(grouped_call(a, b, d, masked(masked_m, expected_m), config));
}

void prepare_kgrouped(const MatrixView& a, const MatrixView& b, const MatrixView& d, const int32_t* k_sizes,
                      bool accumulate, const GemmConfig& config) {
  api::prepare_call(grouped_call(a, b, d, kgrouped(k_sizes, accumulate), config));
}

}  // namespace tilecast

// One GEMM call as the API entry points pass it on (gemm.cpp, grouped.cpp), and the path it
// takes: a call this thread made before only launches; otherwise validate, take the prepared plan,
// encode the descriptors, remember the call, launch.
#pragma once

#include <cuda_runtime_api.h>

#include "tilecast/device/scheduler/problem.cuh"
#include "tilecast/gemm.hpp"

namespace tilecast::api {

// The grouped forms' own arguments, as the caller gave them (type kNormal: a plain gemm() call,
// dense or batched).
struct GroupArgs {
  GemmType type = GemmType::kNormal;
  ContiguousLayout layout = ContiguousLayout::kOffsets;  // kMGroupedContiguous
  const int32_t* data = nullptr;                         // the layout, masked counts or k-group sizes
  int64_t expected_m = 0;                                // kMGroupedMasked
  bool accumulate = false;                               // kKGroupedContiguous: D += (C is D)

  bool operator==(const GroupArgs&) const = default;
};

// Every argument of a call. The per-thread call cache compares whole CallArgs, so that a field
// added here is part of its key without anyone writing it there.
struct CallArgs {
  MatrixView a, b, d, c;
  bool has_c = false;
  float alpha = 1.0f, beta = 1.0f;  // the epilogue (GemmEpilogue): D = alpha * A * B^T + beta * C + bias
  VectorView bias;
  GroupArgs group;
  GemmConfig config;
  GemmLayout layout = GemmLayout::kNT;  // how A and B are stored (the grouped forms: NT only)

  bool operator==(const CallArgs&) const = default;
};

// Launches the call on `stream` (through the per-thread call cache).
void run_call(const CallArgs& args, cudaStream_t stream);

// Validates, plans, compiles and loads what run_call(args) needs, and remembers the call.
void prepare_call(const CallArgs& args);

}  // namespace tilecast::api

// One GEMM call as the API entry points pass it on (gemm.cpp, grouped.cpp), and the path it
// takes: a call this thread made before only launches; otherwise validate, take the prepared plan,
// encode the descriptors, remember the call, launch.
#pragma once

#include <cuda_runtime_api.h>

#include "jit/tma.hpp"
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

// How far L2 widens an operand load that misses (the TMA descriptor's L2 promotion): 256 bytes
// (the line and its neighbour) where the box rows start on a line, 128 where they start off one
// (`box_row_alignment` < 128: plan::box_row_alignment, which takes k-grouped boxes as off a line).
// Off a line every box row already reads two lines and L2's tag lookups bind, and the wider
// promotion cost time: A/B on the H200, alternating processes, two rounds
// (bench/results/2026-12-03-h200-companion.md, run F): 1000^3 8.7% faster with 128 bytes, 4104^3
// in 192x176 tiles of 2x1 9%, the kgrouped suite 1.7-2.8%, 8191x8193x520 1.6%, the other rows off
// a line within 0.3%. On a line the wider one stays: 128x7168x16384 and 129x24577x1536, whose B
// streams from HBM, ran 5.0% and 2.2% slower with 128 bytes.
jit::TmaL2Promotion operand_promotion(uint8_t box_row_alignment);

// Launches the call on `stream` (through the per-thread call cache).
void run_call(const CallArgs& args, cudaStream_t stream);

// Validates, plans, compiles and loads what run_call(args) needs, and remembers the call.
void prepare_call(const CallArgs& args);

}  // namespace tilecast::api

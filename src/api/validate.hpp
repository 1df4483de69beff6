// Checks of a GEMM call's arguments, before anything is launched: each failure throws
// tilecast::Error naming the operand and the rule.
#pragma once

#include "tilecast/plan/heuristic.hpp"
#include "tilecast/types.hpp"

namespace tilecast::api {

// The shape of D = A * B^T (+ C) for these views, or an Error. Pure: it reads no device memory
// and so runs without a GPU (where_is supplies pointer facts, see below).
struct PointerFacts {
  bool device_memory = false;  // device (or managed) memory of the current device
  int device = -1;
};
using PointerQuery = PointerFacts (*)(const void*);

plan::GemmShape validate_gemm(const MatrixView& a, const MatrixView& b, const MatrixView& d, const MatrixView* c,
                              PointerQuery where_is);

// cudaPointerGetAttributes for the current device.
PointerFacts query_pointer(const void* p);

}  // namespace tilecast::api
